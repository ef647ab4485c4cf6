"""The OpenAPI schema published in docs/ is the one the API serves (issue 20: "/openapi.json and docs/API.md")."""

from __future__ import annotations

import json

from crawl_assets.api.openapi_doc import DOC, render, served_schema


def test_the_published_schema_is_the_served_one(api) -> None:
    served = api.get("/openapi.json").json()
    assert served == served_schema(), "the app builds the same schema whatever its node and key store"
    assert DOC.read_text(encoding="utf-8") == render(served), (
        "docs/openapi.json is stale: run python -m crawl_assets.api.openapi_doc")
    assert {"/v1/search", "/v1/exports/records", "/v1/networks/{network}"} <= set(json.loads(DOC.read_text())["paths"])
    assert "docs/openapi.json" in (DOC.parent / "API.md").read_text(encoding="utf-8")
