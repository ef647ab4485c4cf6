"""``docs/openapi.json``: the OpenAPI schema the API serves at ``/openapi.json``, published beside docs/API.md.

``python -m crawl_assets.api.openapi_doc`` rewrites it; a test fails when it differs from what the app serves,
so the published schema cannot drift from the code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def served_schema() -> dict[str, Any]:
    """The app's schema, built without a node or a key database (nothing is contacted)."""
    from elasticsearch import Elasticsearch

    from crawl_assets.api.app import create_app
    from crawl_assets.api.access import KeyStore

    keys = KeyStore("sqlite://")  # in memory: the schema does not depend on any key
    try:
        return create_app(Elasticsearch("http://127.0.0.1:9"), keys).openapi()
    finally:
        keys.close()


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    DOC.write_text(render(served_schema()), encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
