"""Index and alias names are injective in the tenant (issue 15, item 3), and indices of the earlier
naming scheme are renamed without losing a document or a version. Through the ``es`` fixture: the real
Elasticsearch node the tests start, or the cluster ``CRAWL_TEST_ES_URL`` names."""

from __future__ import annotations

from pathlib import Path

import pytest
from elasticsearch import NotFoundError

from crawl_assets.index.indices import tenant_indices
from crawl_assets.index.naming import FAMILIES, index_name, index_pattern, parse_index, read_alias
from crawl_assets.index.sink import index_documents
from crawl_assets_tests.index.conftest import EsTarget
from crawl_assets_tests.index.docs import edge, record
from crawl_assets_tests.index.test_es_cli import run_cli  # noqa: F401 (fixture)


def _drop(es: EsTarget, *tenants: str) -> None:
    from crawl_assets.index.legacy_names import legacy_indices

    for tenant in tenants:
        for family in FAMILIES:
            for name in [*tenant_indices(es.client, family, tenant), *legacy_indices(es.client, [tenant])]:
                es.client.indices.delete(index=name, ignore_unavailable=True)


def _ids(es: EsTarget, family: str, tenant: str) -> set[str]:
    try:
        es.client.indices.refresh(index=read_alias(family, tenant))
        resp = es.client.search(index=read_alias(family, tenant), size=1000, query={"match_all": {}})
    except NotFoundError:
        return set()
    return {h["_id"] for h in resp["hits"]["hits"]}


@pytest.mark.parametrize("suffix", ["undated", "all", "2026"])
def test_no_tenant_name_reaches_another_tenants_index_or_alias(suffix: str) -> None:
    for family in FAMILIES:
        for month in (None, "2026.02"):
            own = index_name(family, "t", month)
            other = f"t-{suffix}"
            assert own != read_alias(family, other) and not own.startswith(index_pattern(family, other)[:-1])
            assert not index_name(family, other, month).startswith(index_pattern(family, "t")[:-1])
            assert parse_index(index_name(family, other, month))[1] == other


def test_a_tenant_named_like_anothers_undated_index_reads_nothing_of_it(es: EsTarget, tmp_path: Path) -> None:
    """Before: tenant t's undated edges index was crawl-edges-t-undated, the very name of tenant
    t-undated's read alias, so searching as t-undated returned t's edges (and t-undated could not index)."""
    other = f"{es.tenant}-undated"
    try:
        mine = [edge(i, es.tenant, created_at=None) for i in range(3)]
        index_documents(es.client, mine, family="edges", tenant=es.tenant, deadletter_root=str(tmp_path / "lake"))
        assert len(_ids(es, "edges", es.tenant)) == 3
        assert _ids(es, "edges", other) == set(), "another tenant's alias reads this tenant's index"
        theirs = [edge(i + 10, other) for i in range(2)]
        stats = index_documents(es.client, theirs, family="edges", tenant=other, deadletter_root=str(tmp_path / "lake"))
        assert stats.failed == 0
        assert len(_ids(es, "edges", other)) == 2 and len(_ids(es, "edges", es.tenant)) == 3
    finally:
        _drop(es, es.tenant, other)


def _legacy(es: EsTarget, tenant: str, family: str, suffix: str, docs: list[dict], version: int) -> str:
    name = f"crawl-{family}-{tenant}-{suffix}"
    es.client.indices.create(index=name)
    for doc in docs:
        doc_id = doc["key"] if family == "records" else f"{doc['type']}:{doc['src']}:{doc['dst']}"
        es.client.index(index=name, id=doc_id, document=doc, version=version, version_type="external")
    es.client.indices.refresh(index=name)
    return name


def test_es_setup_renames_indices_of_the_earlier_scheme_keeping_documents_and_versions(es: EsTarget, run_cli) -> None:
    from crawl_assets.index.legacy_names import migrate_legacy_indices
    from crawl_assets.index.naming import parse_legacy_index

    other = f"{es.tenant}-undated"
    try:
        records = [record(i, es.tenant, month=2) for i in range(1205)]  # more than one page
        old_records = _legacy(es, es.tenant, "records", "2026.02", records, version=7)
        old_undated = _legacy(es, es.tenant, "edges", "undated", [edge(1, es.tenant, created_at=None)], version=3)
        old_theirs = _legacy(es, other, "edges", "2026.02", [edge(2, other)], version=5)
        assert parse_legacy_index(old_undated) == ("edges", es.tenant, None)
        assert parse_legacy_index(old_theirs) == ("edges", other, "2026.02")

        dry = run_cli("setup", "--tenant", other, "--dry-run")
        assert dry.exit_code == 0, dry.output
        assert f"would rename (earlier naming scheme): {old_undated} -> " in dry.output  # it blocks other's alias
        assert old_undated in es.client.indices.get(index=old_undated)

        result = run_cli("setup", "--tenant", es.tenant, "--tenant", other)
        assert result.exit_code == 0, result.output
        for old in (old_records, old_undated, old_theirs):  # no index of that name (old_undated is now an alias)
            assert old not in es.client.indices.get(index=old, ignore_unavailable=True, allow_no_indices=True)
        new = index_name("records", es.tenant, "2026.02")
        resp = es.client.search(index=new, size=2000, version=True, query={"match_all": {}})
        hits = resp["hits"]["hits"]
        assert {h["_id"] for h in hits} == {r["key"] for r in records} and {h["_version"] for h in hits} == {7}
        assert _ids(es, "edges", es.tenant) and _ids(es, "edges", other)
        assert len(_ids(es, "edges", other)) == 1, "the tenant's alias holds only its own index"
        assert migrate_legacy_indices(es.client, [es.tenant, other]).renamed == []  # idempotent
    finally:
        _drop(es, es.tenant, other)
