"""Erasure takes the enrichment features with the records: feature parts of erased or rewritten parts, the
tenant-wide tables and the feature documents go; the report counts the kinds of personal data the erased
records held (never the values); the next enrichment run rebuilds the rest without the erased person."""

from __future__ import annotations

from collections import Counter

import dagster as dg
import orjson
import pyarrow.parquet as pq
from click.testing import CliRunner

from crawl_assets.cli.main import cli
from crawl_assets.enrich import ENRICHERS, store
from crawl_assets.enrich.run import enrich_source
from crawl_assets.erasure.features import erase_feature_files
from crawl_assets.lake import Lake
from crawl_assets_tests.enrich.records import batch_id, record, write_part
from crawl_assets_tests.erasure.test_erase import _records, synced  # noqa: F401 (fixture)
from crawl_assets_tests.es_node.inspect import sources

PERSIAN = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")


def _feature_rows(lake: Lake, tenant: str) -> list[dict]:
    out = []
    for path in lake.fs.glob(lake.path(f"features/*/{tenant}/**/*.parquet")):
        with lake.fs.open(path, "rb") as fh:
            out += pq.read_table(fh).to_pylist()
    return out


def test_feature_files_of_erased_parts_go_and_personal_data_is_counted_by_type(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    rows = [record("x:1", "mail sara@example.com or call " + "09123456789".translate(PERSIAN), author="sara"),
            record("x:2", "second number 0912 345 6789", author="sara"),
            record("x:3", "reach me at ali@example.org", author="ali")]
    write_part(lake, rows, batch_id(1))
    write_part(lake, [record("x:4", "an unrelated message from someone else entirely", author="ali")], batch_id(2))
    for cls in ENRICHERS.values():
        enrich_source(lake, cls(), "acme", "x", "acme.x.main")
    # the erasure rewrote batch 1 without sara's records (a new batch id) and removed the old part
    lake.fs.rm(lake.path(lake.table_part("normalized_records", "acme", "x", "acme.x.main", batch_id(1))))
    write_part(lake, [rows[2]], batch_id(1) + "-eabc")

    erased = erase_feature_files(lake, "acme", {"x:1", "x:2"})
    assert erased.personal_data == {"email": 2, "phone": 4}, "text and text_clean spans of sara's two records"
    assert erased.parts_removed == len(ENRICHERS) and erased.tenant_tables_removed > 0
    left = _feature_rows(lake, "acme")
    assert left and not [r for r in left if r.get("key") in {"x:1", "x:2"} or r.get("author_id") == "sara"]
    assert not lake.fs.glob(lake.path("features/*/acme/_tenant"))
    # the next run enriches the rewritten part and rebuilds the tenant tables from what remains
    for cls in ENRICHERS.values():
        result = enrich_source(lake, cls(), "acme", "x", "acme.x.main")
        assert result.parts_enriched == [batch_id(1) + "-eabc"] and not result.failed
    accounts = store.read_table(lake, store.tenant_path("account_activity", "acme", "accounts"))
    assert accounts.column("author_id").to_pylist() == ["ali"]


def test_erase_author_removes_their_features_from_the_lake_and_the_index(synced):  # noqa: F811
    es, keys, lake = synced
    from crawl_assets.definitions import build_definitions

    instance = dg.DagsterInstance.get()
    defs = build_definitions()
    for key in keys:
        assert defs.resolve_job_def(f"{key.split('.')[1]}_enrich").execute_in_process(
            partition_key=key, instance=instance).success
    docs = sources(es.client, "crawl-features-demo")
    author = Counter(r["author_id"] for r in _records(lake, "demo") if r["platform"] == "x").most_common(1)[0][0]
    erased = {r["key"] for r in _records(lake, "demo") if r["author_id"] == author}
    assert any(d.get("author_id") == author for d in docs.values())
    assert any(author in d.get("near_duplicates", {}).get("accounts", []) for d in docs.values())

    result = CliRunner().invoke(cli, ["erase", "--tenant", "demo", "--author", author])
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["index_features_deleted"] > 0 and report["feature_parts_removed"] > 0
    assert report["personal_data_found"] == {}, "the demo's x posts hold no personal data"

    def nothing_of_theirs() -> None:
        docs = sources(es.client, "crawl-features-demo")
        assert not [d for d in docs.values() if d.get("author_id") == author or d.get("record_key") in erased
                    or author in d.get("near_duplicates", {}).get("accounts", [])]
        assert not [r for r in _feature_rows(lake, "demo") if r.get("author_id") == author or r.get("key") in erased
                    or author in (r.get("accounts") or [])]

    nothing_of_theirs()
    for key in keys:  # the next enrichment run rebuilds what the erasure dropped, still without them
        assert defs.resolve_job_def(f"{key.split('.')[1]}_enrich").execute_in_process(
            partition_key=key, instance=instance).success
    nothing_of_theirs()
    assert any(d["kind"] == "cluster" for d in sources(es.client, "crawl-features-demo").values())
