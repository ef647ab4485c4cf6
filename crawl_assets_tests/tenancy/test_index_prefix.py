"""Two deployments on one cluster, told apart by ``CRAWL_INDEX_PREFIX``: their indices, aliases and templates
never see or touch each other's, through setup, indexing, search, erasure and retention; a bad prefix is
refused naming the variable."""

from __future__ import annotations

from datetime import datetime, timezone
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from crawl_assets.index.indices import delete_expired_months, load_template, setup_indices
from crawl_assets.index.erasure import erase_documents
from crawl_assets.query.filters import RecordFilter
from crawl_assets.index.naming import (FAMILIES, family_alias, index_name, index_pattern, parse_index, read_alias,
                                       template_name)
from crawl_assets.api.pages import search_page
from crawl_assets.index.sink import index_documents
from crawl_assets.settings import Settings
from crawl_assets_tests.es_node.inspect import wipe
from crawl_assets_tests.index.docs import edge, record

TENANT = "demo"
# "crawl2" begins with "crawl": the case where a pattern not ending the prefix with "-" would reach across.
DEPLOYMENTS = {"crawl": range(0, 4), "crawl2": range(0, 6)}


@pytest.mark.parametrize("bad", ["", "Crawl", "a-b", "crawl*", "_crawl", "a,b", "9lives", "a_b", "x" * 21, "ab c"])
def test_a_bad_index_prefix_is_refused_naming_the_variable(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="CRAWL_INDEX_PREFIX"):
        Settings.from_env({"CRAWL_INDEX_PREFIX": bad})
    monkeypatch.setenv("CRAWL_INDEX_PREFIX", bad)
    with pytest.raises(ValueError, match="CRAWL_INDEX_PREFIX"):
        index_name("records", TENANT, "2026.01")


def test_names_patterns_and_templates_follow_the_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRAWL_INDEX_PREFIX", raising=False)
    assert Settings.from_env({}).index_prefix == "crawl"
    default = index_name("records", TENANT, "2026.01")
    assert default == "crawl-records-demo.2026.01" and load_template("edges")["index_patterns"] == ["crawl-edges-*"]
    monkeypatch.setenv("CRAWL_INDEX_PREFIX", "crawl2")
    other = index_name("records", TENANT, "2026.01")
    assert other == "crawl2-records-demo.2026.01" and parse_index(other) == ("records", TENANT, "2026.01")
    assert parse_index(default) is None
    assert (template_name("records"), family_alias("edges"), read_alias("authors", TENANT)) == (
        "crawl2-records", "crawl2-edges", "crawl2-authors-demo")
    assert load_template("records")["index_patterns"] == ["crawl2-records-*"]
    assert load_template("records")["template"]["aliases"] == {"crawl2-records": {}}
    assert not fnmatchcase(default, index_pattern("records")) and not fnmatchcase(default, index_pattern("records", TENANT))
    monkeypatch.setenv("CRAWL_INDEX_PREFIX", "crawl")
    assert not fnmatchcase(other, index_pattern("records")) and not fnmatchcase(other, index_pattern("records", TENANT))


def _load(client, prefix: str, keys: range, deadletters: Path) -> None:
    setup_indices(client, [TENANT])
    docs = [record(i, TENANT, text=f"{prefix} post {i}") for i in keys]
    docs.append(record(99, TENANT, year=2020, text=f"{prefix} old post"))  # a month retention expires
    for family, batch in (("records", docs), ("edges", [edge(i, TENANT) for i in keys])):
        stats = index_documents(client, batch, family=family, tenant=TENANT, deadletter_root=str(deadletters))
        assert stats.failed == 0


def _records(client) -> dict[str, str]:
    client.indices.refresh(index=read_alias("records", TENANT))
    page = search_page(client, TENANT, RecordFilter(), size=100)
    return {doc["key"]: doc["text"] for doc in page.records}


def test_two_deployments_on_one_node_never_touch_each_other(es_cluster, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    client = es_cluster.client
    try:
        for prefix, keys in DEPLOYMENTS.items():
            monkeypatch.setenv("CRAWL_INDEX_PREFIX", prefix)
            _load(client, prefix, keys, tmp_path / prefix)

        for prefix, keys in DEPLOYMENTS.items():
            monkeypatch.setenv("CRAWL_INDEX_PREFIX", prefix)
            texts = _records(client)
            assert len(texts) == len(keys) + 1 and all(t.startswith(f"{prefix} ") for t in texts.values())
            client.indices.refresh(index=read_alias("edges", TENANT))
            assert client.count(index=read_alias("edges", TENANT))["count"] == len(keys)
            for family in FAMILIES:
                got = client.indices.get_index_template(name=template_name(family))["index_templates"][0]
                assert got["index_template"]["index_patterns"] == [f"{prefix}-{family}-*"]
            for family in ("records", "edges"):
                held = client.indices.get_alias(name=family_alias(family)).body
                assert held and all(name.startswith(f"{prefix}-{family}-{TENANT}.") for name in held)
                held = client.indices.get_alias(name=read_alias(family, TENANT)).body
                assert held and all(name.startswith(f"{prefix}-") for name in held)

        # erasure in crawl2 of a key both deployments hold: crawl keeps its copy
        monkeypatch.setenv("CRAWL_INDEX_PREFIX", "crawl2")
        assert erase_documents(client, TENANT, ["x:1001"]) == 1
        assert "x:1001" not in _records(client)
        # retention in crawl: its 2020 month goes, crawl2's stays
        monkeypatch.setenv("CRAWL_INDEX_PREFIX", "crawl")
        assert "x:1001" in _records(client)
        doomed = delete_expired_months(client, TENANT, 12, now=datetime(2026, 6, 1, tzinfo=timezone.utc))
        assert doomed == ["crawl-records-demo.2020.01"]
        assert client.indices.exists(index="crawl2-records-demo.2020.01")
        assert not client.indices.exists(index="crawl-records-demo.2020.01")
        monkeypatch.setenv("CRAWL_INDEX_PREFIX", "crawl2")
        assert len(_records(client)) == len(DEPLOYMENTS["crawl2"])  # all but the erased one; the old month stays
    finally:
        wipe(client, "crawl2-")
