"""Metadata that means what it says: export-file syncs count records like live syncs, and
``normalized_records`` shows a preview and per-language/per-kind counts of what it wrote."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from crawl_assets.orchestration.assets import derived_assets, raw_asset
from crawl_assets_tests.pipeline.export_source import KEY, telegram_export_source

telegram_messages_raw = raw_asset("telegram")

RAW = dg.AssetKey(["telegram", "telegram_messages_raw"])
NORMALIZED = dg.AssetKey(["telegram", "normalized_records"])
PLOTTED = ("records_fetched", "records_new", "records_updated", "records_deleted", "newest_item_age_days",
           "duration_seconds", "batches_written")


@pytest.fixture
def instance(isolated_env):
    with dg.instance_for_test() as inst:
        yield inst


def _latest(instance: dg.DagsterInstance, key: dg.AssetKey) -> dict:
    [record] = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key, asset_partitions=[KEY]), limit=1).records
    return {k: v.value for k, v in record.asset_materialization.metadata.items()}


def test_export_syncs_count_records_and_normalized_records_previews_them(tmp_path, instance):
    export, resources = telegram_export_source(tmp_path, instance)
    chain = [telegram_messages_raw, *derived_assets("telegram", telegram_messages_raw)[:2]]

    def sync() -> None:
        assert dg.materialize(chain, partition_key=KEY, instance=instance, resources=resources).success

    sync()
    raw, normalized = _latest(instance, RAW), _latest(instance, NORMALIZED)
    messages = [m for m in json.loads(export.read_text())["messages"] if m.get("type") == "message"]
    assert raw["records_fetched"] == raw["records_new"] == normalized["records_written"] == len(messages)
    assert raw["records_updated"] == raw["records_deleted"] == 0 and raw["batches_written"] == 1
    assert raw["newest_item_age_days"] > 0  # an export's newest item: its age in days, not a sync lag
    for name in PLOTTED:  # numbers (not bools or text), so the UI plots them
        assert type(raw[name]) in (int, float), name
    # nothing that is zero by construction for a file, and no lag in seconds
    assert not {"requests", "rate_limit_wait_seconds", "newest_event_lag_seconds", "newest_event_lag_hours"} & set(raw)
    assert "items_written" not in raw and "derivation_pending" not in raw
    # nothing rejected: the file of set-aside service messages is named for what it holds, not "quarantine"
    assert normalized["rejected"] == 0 and "quarantine_files" not in normalized
    assert normalized["not_posts"] == 0 or normalized["not_posts_files"]
    assert sum(normalized["records_by_lang"].values()) == sum(normalized["records_by_kind"].values()) == len(messages)
    assert set(normalized["records_by_lang"]) >= {"fa", "en"}
    preview = normalized["preview"]
    assert preview.count(" | live |\n") == 5 and "| time | lang | kind | state |" in preview
    assert "telegram:" not in preview, "no record key in the event log (it is not erased)"
    assert len(preview) < 1000  # rendered inline by the UI

    # Unchanged: nothing stored, zero counts, the lag still reported (grown since).
    sync()
    again = _latest(instance, RAW)
    assert (again["records_fetched"], again["records_new"], again["batches_written"]) == (0, 0, 0)
    assert again["newest_item_age_days"] >= raw["newest_item_age_days"]
    assert "preview" in _latest(instance, NORMALIZED)  # the newest part, written by the earlier sync

    # A re-export with one edited message and one new one: 1 updated, 1 new, the rest re-observed.
    data = json.loads(export.read_text())
    first = next(m for m in data["messages"] if m.get("type") == "message")
    first.update(text="ویرایش شد", edited="2024-06-01T10:00:00", edited_unixtime="1717236000")
    data["messages"].append({**first, "id": 999_999, "text": "پیام تازه", "edited": None, "edited_unixtime": None})
    for field in ("edited", "edited_unixtime"):
        data["messages"][-1].pop(field)
    export.write_text(json.dumps(data, ensure_ascii=False))
    sync()
    edited = _latest(instance, RAW)
    assert (edited["records_fetched"], edited["records_new"], edited["records_updated"]) == (len(messages) + 1, 1, 1)
