"""Through Dagster: places, coordination and account_types are assets of every platform (and tenant-wide
tables for the last two) whose code version is their stamp, so a changed parameter of one marks only that
one's assets stale (the full materialize-and-staleness run is ``test_assets.py``, over every enricher)."""

from __future__ import annotations

import dagster as dg
import pytest

from crawl_assets.core import catalog

NAMES = ("places", "coordination", "account_types")


def _versions() -> dict[dg.AssetKey, str | None]:
    from crawl_assets.definitions import build_definitions

    graph = build_definitions().resolve_asset_graph()
    return {key: graph.get(key).code_version for key in graph.get_all_asset_keys()
            if "enrichment" in key.path}


@pytest.mark.parametrize("changed,yaml", [("places", "places: {min_confidence: 0.7}"),
                                          ("coordination", "coordination: {window_seconds: 30}"),
                                          ("account_types", "account_types: {min_posts: 10}")])
def test_a_changed_parameter_changes_only_that_enrichers_code_versions(changed, yaml, tmp_path, monkeypatch):
    monkeypatch.delenv("CRAWL_ENRICHMENT", raising=False)
    before = _versions()
    for name in NAMES:
        assert before[dg.AssetKey([catalog.platforms()[0], "enrichment", name])].startswith(f"{name}/1+")
    assert dg.AssetKey(["enrichment", "coordination"]) in before and dg.AssetKey(["enrichment", "account_types"]) in before
    config = tmp_path / "enrichment.yaml"
    config.write_text(f"enrichers:\n  {yaml}\n")
    monkeypatch.setenv("CRAWL_ENRICHMENT", str(config))
    after = _versions()
    moved = {key for key in before if before[key] != after[key]}
    assert moved and all(key.path[-1] == changed for key in moved), moved
    assert len(moved) >= len(catalog.platforms()), "every platform's asset of that enricher"
