"""Through Dagster: the enrichment assets after normalized_records; a changed enricher version marks only its
asset stale (code version), materializing re-derives only its features, incrementally, and the normalized
records stay byte for byte as they were."""

from __future__ import annotations

import hashlib
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.data_version import StaleStatus
from dagster._utils.test.data_versions import get_stale_status_resolver

from crawl_assets import settings
from crawl_assets.cli.demo import register_samples
from crawl_assets.enrich import store
from crawl_assets.enrich.config import ENRICHERS
from crawl_assets.lake import Lake

SOURCE = "demo.x.sample-search"


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _defs():
    from crawl_assets.definitions import build_definitions

    return build_definitions()


def _key(name: str) -> dg.AssetKey:
    return dg.AssetKey(["x", "enrichment", name])


def _statuses(instance, defs) -> dict[str, StaleStatus]:
    assets = [defs.resolve_assets_def(_key(n)) for n in ENRICHERS] + [defs.resolve_assets_def(dg.AssetKey(["x", "normalized_records"]))]
    resolver = get_stale_status_resolver(instance, assets)
    return {n: resolver.get_status(_key(n), SOURCE) for n in ENRICHERS}


def _tenant_tables(result) -> dict[str, dict]:
    """Metadata of the run's ``enrichment/{enricher}`` (tenant-wide tables) materializations, by enricher."""
    out = {}
    for event in result.get_asset_materialization_events():
        mat = event.event_specific_data.materialization
        if mat.asset_key.path[0] == "enrichment" and len(mat.asset_key.path) == 2:
            out[mat.asset_key.path[-1]] = {k: v.value for k, v in mat.metadata.items()}
    return out


def _materialized(result) -> dict[str, dict]:
    out = {}
    for event in result.get_asset_materialization_events():
        mat = event.event_specific_data.materialization
        if mat.asset_key.path[1:2] == ["enrichment"]:
            out[mat.asset_key.path[-1]] = {k: v.value for k, v in mat.metadata.items()}
    return out


@pytest.fixture
def synced(dagster_home):
    register_samples(settings.registry_path())
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("x_sources", [SOURCE])
        defs = _defs()
        assert defs.resolve_job_def("x_sync_no_index").execute_in_process(partition_key=SOURCE, instance=instance).success
        yield instance, Lake(settings.lake_root())


def test_lineage_and_sync_jobs_leave_enrichment_to_its_own_job():
    defs = _defs()
    graph = defs.resolve_asset_graph()
    for name in ENRICHERS:
        node = graph.get(_key(name))
        assert node.parent_keys == {dg.AssetKey(["x", "normalized_records"])}
        assert node.partitions_def.name == "x_sources" and node.code_version.startswith(f"{name}/")
        assert node.group_name == "x_enrichment"
    assert not any(k.path[1:2] == ["enrichment"] for k in defs.resolve_job_def("x_sync_no_index").asset_layer.selected_asset_keys)
    tenant_wide = {n for n, cls in ENRICHERS.items() if cls.scope == "tenant"}
    assert defs.resolve_job_def("x_enrich").asset_layer.selected_asset_keys == \
        {_key(n) for n in ENRICHERS} | {dg.AssetKey(["enrichment", n]) for n in tenant_wide}
    for name in tenant_wide:  # the tenant-wide tables: after that enricher's assets on every platform
        parents = graph.get(dg.AssetKey(["enrichment", name])).parent_keys
        assert _key(name) in parents and all(k.path[1:] == ["enrichment", name] for k in parents)


def test_version_change_marks_stale_and_re_derives_only_that_enricher(synced, tmp_path, monkeypatch):
    instance, lake = synced
    records_root = Path(lake.root) / "tables" / "normalized_records"
    records_before = _digests(records_root)
    defs = _defs()
    first = defs.resolve_job_def("x_enrich").execute_in_process(partition_key=SOURCE, instance=instance)
    assert first.success
    meta = _materialized(first)
    assert set(meta) == set(ENRICHERS)
    assert all(m["parts_enriched"] >= 1 and m["parts_failed"] == 0 for m in meta.values())
    assert meta["classifier"]["rows_written"] > 0
    tables = _tenant_tables(first)
    assert tables["near_duplicates"]["tenants_rebuilt"] == 1 and tables["near_duplicates"]["tenant_clusters_rows"] >= 1
    assert set(_statuses(instance, defs).values()) == {StaleStatus.FRESH}
    features_before = _digests(Path(lake.root) / "features")

    config = tmp_path / "enrichment.yaml"
    config.write_text("enrichers:\n  personal_data: {types: [email, phone]}\n")
    monkeypatch.setenv("CRAWL_ENRICHMENT", str(config))
    changed = _defs()
    assert changed.resolve_asset_graph().get(_key("personal_data")).code_version != \
        defs.resolve_asset_graph().get(_key("personal_data")).code_version
    statuses = _statuses(instance, changed)
    assert statuses.pop("personal_data") == StaleStatus.STALE, "a new enricher version is shown as stale"
    assert set(statuses.values()) == {StaleStatus.FRESH}, "the other enrichers are not"
    resolver = get_stale_status_resolver(instance, [changed.resolve_assets_def(_key("personal_data"))])
    assert any("code version" in cause.reason for cause in resolver.get_stale_causes(_key("personal_data"), SOURCE))

    second = changed.resolve_job_def("x_enrich").execute_in_process(partition_key=SOURCE, instance=instance)
    assert second.success
    meta2 = _materialized(second)
    assert meta2["personal_data"]["parts_enriched"] == meta["personal_data"]["parts_enriched"], "re-derived"
    assert all(meta2[n]["parts_enriched"] == 0 and meta2[n]["records_read"] == 0 for n in ENRICHERS if n != "personal_data"), \
        "only records not yet enriched at the current version are processed"
    assert set(_statuses(instance, changed).values()) == {StaleStatus.FRESH}
    features_after = _digests(Path(lake.root) / "features")
    assert {k: v for k, v in features_after.items() if not k.startswith("personal_data/")} == \
        {k: v for k, v in features_before.items() if not k.startswith("personal_data/")}
    assert _digests(records_root) == records_before, "records are never rewritten"
    stamp = changed.resolve_asset_graph().get(_key("personal_data")).code_version
    parts = list(store.read_parts(lake, store.tenant_parts(lake, "personal_data", "demo")))
    assert parts and all(set(t.column("enricher_version").to_pylist()) <= {stamp} for _, t in parts)
    assert all(store.footer(lake, p)[store.STAMP_KEY] == stamp.encode() for p, _ in parts), "every part re-stamped"


def test_a_bad_enrichment_file_costs_the_enrichment_assets_only(tmp_path, monkeypatch, caplog):
    """The code location loads with the syncs and the other enrichers as usual; the enricher whose section is
    bad keeps its asset, which fails when run, saying why."""
    config = tmp_path / "enrichment.yaml"
    config.write_text("enrichers:\n  near_duplicates: {threshold: 7}\n")
    monkeypatch.setenv("CRAWL_ENRICHMENT", str(config))
    with caplog.at_level("ERROR"):
        defs = _defs()
    graph = defs.resolve_asset_graph()
    assert dg.AssetKey(["x", "normalized_records"]) in graph.get_all_asset_keys()
    assert defs.resolve_job_def("x_sync_no_index") is not None and defs.resolve_job_def("x_enrich") is not None
    assert graph.get(_key("near_duplicates")).code_version.startswith("near_duplicates/unusable+")
    assert graph.get(_key("personal_data")).code_version.startswith("personal_data/1+"), "the others as usual"
    assert f"{config}: enrichers.near_duplicates" in caplog.text and "threshold" in caplog.text
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("x_sources", [SOURCE])
        result = dg.materialize([defs.resolve_assets_def(_key("near_duplicates"))], partition_key=SOURCE,
                                instance=instance, raise_on_error=False)
    [failure] = result.get_step_failure_events()
    message = failure.step_failure_data.user_failure_data.description
    assert not result.success and f"{config}: enrichers.near_duplicates" in message and "threshold" in message


@pytest.mark.parametrize("name, section", [("topics", "topics: {topics: 12}"), ("entities", "entities: {types: [PER]}")])
def test_a_new_stamp_of_topics_or_entities_marks_only_their_assets_stale(synced, tmp_path, monkeypatch, name, section):
    instance, _ = synced
    defs = _defs()
    assert defs.resolve_job_def("x_enrich").execute_in_process(partition_key=SOURCE, instance=instance).success
    assert set(_statuses(instance, defs).values()) == {StaleStatus.FRESH}
    config = tmp_path / "enrichment.yaml"
    config.write_text(f"enrichers:\n  {section}\n")
    monkeypatch.setenv("CRAWL_ENRICHMENT", str(config))
    changed = _defs()
    statuses = _statuses(instance, changed)
    assert statuses.pop(name) == StaleStatus.STALE
    assert set(statuses.values()) == {StaleStatus.FRESH}, "the other enrichers' assets are not stale"
    tenant_wide = [n for n, cls in ENRICHERS.items() if cls.scope == "tenant"]
    tables = [changed.resolve_assets_def(dg.AssetKey(["enrichment", n])) for n in tenant_wide]
    resolver = get_stale_status_resolver(instance, [*tables, *(changed.resolve_assets_def(_key(n)) for n in ENRICHERS)])
    for other in tenant_wide:
        expected = StaleStatus.STALE if other == name else StaleStatus.FRESH
        assert resolver.get_status(dg.AssetKey(["enrichment", other])) == expected, other
