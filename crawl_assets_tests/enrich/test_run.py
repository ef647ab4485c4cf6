"""Enrichment over the lake: incremental by part, re-derived on a new stamp or a re-derived normalized part,
records never rewritten, orphans dropped, one bad part isolated, tenant tables rebuilt only when an input
changed (across platforms)."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path

from crawl_assets.enrich import store
from crawl_assets.enrich.near_duplicates import NearDuplicates
from crawl_assets.enrich.pii import PersonalData
from crawl_assets.enrich.run import enrich_source, read_tenant_table
from crawl_assets.lake import Lake
from crawl_assets_tests.enrich.records import batch_id, record, write_part

NOW = datetime(2026, 4, 1, tzinfo=timezone.utc)
SRC = "acme.x.main"
TEXT = "the same slogan copied by many accounts across the platforms today"


def _digests(root: Path, area: str) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / area).rglob("*")) if p.is_file()}


def _lake(tmp_path: Path) -> Lake:
    lake = Lake(str(tmp_path / "lake"))
    write_part(lake, [record("x:1", "mail a@b.io"), record("x:2", "nothing")], batch_id(1))
    write_part(lake, [record("x:3", "call ۰۹۱۲۳۴۵۶۷۸۹", author="u2")], batch_id(2))
    return lake


def test_incremental_by_part_and_records_untouched(tmp_path):
    lake = _lake(tmp_path)
    before = _digests(tmp_path / "lake", "tables")
    first = enrich_source(lake, PersonalData(), "acme", "x", SRC)
    assert first.parts_enriched == [batch_id(1), batch_id(2)] and first.records_read == 3 and first.rows_written == 2
    again = enrich_source(lake, PersonalData(), "acme", "x", SRC)
    assert again.parts_enriched == [] and again.parts_up_to_date == 2 and again.records_read == 0
    write_part(lake, [record("x:4", "nothing new")], batch_id(3))
    third = enrich_source(lake, PersonalData(), "acme", "x", SRC)
    assert third.parts_enriched == [batch_id(3)] and third.records_read == 1
    after = {k: v for k, v in _digests(tmp_path / "lake", "tables").items() if batch_id(3) not in k}
    assert after == before, "normalized records are only ever read"
    meta = store.footer(lake, store.part_path("personal_data", "acme", "x", SRC, batch_id(1)))
    assert meta[store.STAMP_KEY] == PersonalData().stamp.encode()


def test_a_new_stamp_re_derives_only_that_enrichers_output(tmp_path):
    lake = _lake(tmp_path)
    enrich_source(lake, PersonalData(), "acme", "x", SRC)
    enrich_source(lake, NearDuplicates(), "acme", "x", SRC, now=NOW)
    records = _digests(tmp_path / "lake", "tables")
    neighbours = _digests(tmp_path / "lake", "features/near_duplicates")
    changed = PersonalData(types=["email"])
    result = enrich_source(lake, changed, "acme", "x", SRC)
    assert result.parts_enriched == [batch_id(1), batch_id(2)]
    assert _digests(tmp_path / "lake", "tables") == records
    assert _digests(tmp_path / "lake", "features/near_duplicates") == neighbours
    rows = [r for _, t in store.read_parts(lake, store.tenant_parts(lake, "personal_data", "acme")) for r in t.to_pylist()]
    assert {r["enricher_version"] for r in rows} == {changed.stamp} and [r["key"] for r in rows] == ["x:1"]
    assert enrich_source(lake, changed, "acme", "x", SRC).parts_enriched == []


def test_a_re_derived_normalized_part_is_enriched_again_and_orphans_go(tmp_path):
    lake = _lake(tmp_path)
    enrich_source(lake, PersonalData(), "acme", "x", SRC)
    write_part(lake, [record("x:3", "call ۰۹۱۲۳۴۵۶۷۸۹ or b@c.io", author="u2")], batch_id(2), version="next-normalizer")
    assert enrich_source(lake, PersonalData(), "acme", "x", SRC).parts_enriched == [batch_id(2)]
    lake.fs.rm(lake.path(lake.table_part("normalized_records", "acme", "x", SRC, batch_id(1))))
    result = enrich_source(lake, PersonalData(), "acme", "x", SRC)
    assert result.parts_removed == 1 and result.parts_enriched == []
    assert not lake.exists(store.part_path("personal_data", "acme", "x", SRC, batch_id(1)))


def test_one_unreadable_part_does_not_stop_the_others(tmp_path):
    lake = _lake(tmp_path)
    broken = lake.table_part("normalized_records", "acme", "x", SRC, batch_id(1))
    Path(lake.path(broken)).write_bytes(b"PAR1 not really parquet")
    result = enrich_source(lake, PersonalData(), "acme", "x", SRC)
    assert result.parts_enriched == [batch_id(2)]
    assert len(result.failed) == 1 and result.failed[0].startswith(batch_id(1))


def test_tenant_tables_join_platforms_and_rebuild_only_on_change(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    write_part(lake, [record("x:1", TEXT, author="a"), record("x:2", "a different text with several words in it")],
               batch_id(1))
    write_part(lake, [record("telegram:9", TEXT + "!", platform="telegram", author="b")], batch_id(1),
               platform="telegram", source="acme.telegram.chat")
    enricher = NearDuplicates()
    first = enrich_source(lake, enricher, "acme", "x", SRC, now=NOW)
    assert first.tenant.rebuilt and first.tenant.rows == {"clusters": 0, "members": 0}, "telegram not enriched yet"
    second = enrich_source(lake, enricher, "acme", "telegram", "acme.telegram.chat", now=NOW)
    assert second.tenant.rebuilt and second.tenant.rows == {"clusters": 1, "members": 2}
    members = read_tenant_table(lake, enricher, "acme", "members")
    assert sorted(members.column("key").to_pylist()) == ["telegram:9", "x:1"]
    assert enrich_source(lake, enricher, "acme", "x", SRC, now=NOW).tenant.rebuilt is False
    write_part(lake, [record("x:5", TEXT, author="c")], batch_id(2))
    assert enrich_source(lake, enricher, "acme", "x", SRC, now=NOW).tenant.rows == {"clusters": 1, "members": 3}


class _ErasedWhileCombining(NearDuplicates):
    """Stands for an erasure that removes a normalized part while the tenant tables are being rebuilt."""

    def combine(self, rows, context):
        rows = list(rows)
        lake, part = self.erase_during
        lake.fs.rm(lake.path(part))
        return super().combine(iter(rows), context)


def test_tables_built_while_an_input_part_was_erased_are_not_kept(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    write_part(lake, [record("x:1", TEXT, author="a"), record("x:2", TEXT + "!", author="b")], batch_id(1))
    enricher = _ErasedWhileCombining()
    enricher.erase_during = (lake, lake.table_part("normalized_records", "acme", "x", SRC, batch_id(1)))
    result = enrich_source(lake, enricher, "acme", "x", SRC, now=NOW)
    assert result.tenant is not None and result.tenant.rebuilt is False
    assert read_tenant_table(lake, enricher, "acme", "clusters") is None, "no table holding erased records"
    assert read_tenant_table(lake, enricher, "acme", "members") is None
