"""Erasure is complete and exact (issue 15, item 2): a person erased from a tenant leaves nothing in the
landing area or in nested raw structures; a display name never selects people; tenant names cannot
escape the lake or reach another tenant; an erasure whose index step fails is logged and finished by
running it again."""

from __future__ import annotations

import gzip
from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from crawl_assets import settings
from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
from crawl_assets.cli.main import cli
from crawl_assets.lake import Lake
from crawl_assets.lake.landing import land_event, landed_events
from crawl_assets.normalize.build import wrap_line
from crawl_assets_tests.standins.intercom_api import make_conversation

SOURCE = "acme.intercom.support"


def _conversation(cid: int, user_id: str, text: str) -> dict:
    conv = make_conversation(cid, 1_780_000_000 + cid * 100, 1_780_000_000 + cid * 100 + 50, text=text, user_id=user_id)
    for part in conv["conversation_parts"]["conversation_parts"]:  # give each person their own address
        if part["author"]["type"] == "user":
            part["author"]["email"] = f"{user_id}@example.com"
    conv["source"]["author"]["email"] = f"{user_id}@example.com"
    conv["conversation_parts"]["conversation_parts"].append({  # a part without a body: rejected, quarantined
        "type": "conversation_part", "id": f"{cid}77", "part_type": "close", "body": None, "created_at": 1_780_000_000,
        "attachments": [], "author": {"type": "user", "id": user_id, "name": "Joe", "email": f"{user_id}@example.com"}})
    return conv


def _sync(lake: Lake, conversations: list[dict]) -> None:
    """A synced Intercom source: one raw batch of conversation envelopes, normalized into its part."""
    lines = [wrap_line(orjson.dumps(c), endpoint="conversation", workspace="wsa") for c in conversations]
    batch = lake.write_raw_batch(tenant="acme", platform="intercom", source=SOURCE,
                                 batch_id="20261101T000000000000Z-run1-0000", fmt="intercom", method="api",
                                 run_id="run1", lines=lines, collected_at=datetime(2026, 11, 1, tzinfo=timezone.utc))
    result = normalize_batch(lake, batch, lake.table_part(TABLE, "acme", "intercom", SOURCE, batch.manifest.batch_id))
    assert result.rejected and lake.write_quarantine("acme", "intercom", SOURCE, batch.manifest.batch_id, result.rejected)


def _raw_bytes(lake: Lake) -> bytes:
    out = b""
    for path in lake.fs.find(lake.path("")):
        with lake.fs.open(path, "rb") as fh:
            data = fh.read()
        out += gzip.decompress(data) if path.endswith(".gz") else data
    return out


def _authors(lake: Lake) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, table in lake.read_parts(TABLE, "acme", "intercom", SOURCE):
        for author in table.column("author_id").to_pylist():
            counts[author] = counts.get(author, 0) + 1
    return counts


@pytest.fixture
def lake() -> Lake:
    lake = Lake(settings.lake_root())
    _sync(lake, [_conversation(1, "u1", "joe one writes"), _conversation(2, "u2", "joe two writes")])
    return lake


def _erase(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, ["erase", "--tenant", "acme", *args], input=input)


def test_a_display_name_selects_nobody_and_an_id_selects_exactly_one_person(lake):
    """Both users are called "Joe": erasing "Joe" erased both before."""
    before = _authors(lake)
    assert before["user:u1"] and before["user:u2"]
    result = _erase("--author", "Joe")
    assert result.exit_code == 2 and "no record of tenant 'acme' has author id 'Joe'" in result.output
    assert _authors(lake) == before, "a display name erased people"
    listed = _erase("--author-name", "Joe", input="n\n")
    assert listed.exit_code != 0 and "user:u1" in listed.output and "user:u2" in listed.output
    assert _authors(lake) == before, "nothing is erased without confirmation"
    result = _erase("--author", "user:u1")
    assert result.exit_code == 0, result.output
    after = _authors(lake)
    assert "user:u1" not in after and after["user:u2"] == before["user:u2"]


def test_rewritten_raw_keeps_no_id_or_address_of_the_person_in_nested_structures(lake):
    quarantined = b"".join(lake.fs.cat_file(p) for p in lake.fs.glob(lake.path("quarantine/acme/*/*/*.jsonl")))
    assert b"u1@example.com" in quarantined, "the person's rejected part is in quarantine before"
    assert _erase("--author", "user:u1").exit_code == 0
    raw = _raw_bytes(Lake(settings.lake_root()))  # every file of the lake: raw, quarantine, tables, log
    assert b"u1@example.com" not in raw and b"joe one writes" not in raw
    assert b'"u1"' not in raw, "the person's id remains (e.g. contacts[].id)"
    assert b"u2@example.com" in raw and b"joe two writes" in raw, "the other Joe is untouched"


def test_landed_webhook_events_are_erased_too(lake):
    notification = {"type": "notification_event", "id": "notif_1", "topic": "conversation.user.replied",
                    "app_id": "wsa", "created_at": 1_780_000_500,
                    "data": {"type": "notification_event_data", "item": _conversation(1, "u1", "joe one writes")}}
    land_event(lake, tenant="acme", platform="intercom", source=SOURCE, body=orjson.dumps(notification))
    other = {**notification, "id": "notif_2", "data": {"type": "notification_event_data",
                                                        "item": _conversation(2, "u2", "joe two writes")}}
    land_event(lake, tenant="acme", platform="intercom", source=SOURCE, body=orjson.dumps(other))
    assert _erase("--author", "user:u1").exit_code == 0
    landed = b"".join(lake.fs.cat_file(lake.path(e.path)) for e in landed_events(lake))
    assert b"u1@example.com" not in landed and b"joe one writes" not in landed and b'"u1"' not in landed
    assert b"u2@example.com" in landed and b"joe two writes" in landed


@pytest.mark.parametrize("tenant", ["../../escape", "globex/../acme", "*", "acme\n", "ACME"])
def test_erase_refuses_a_tenant_that_is_not_a_tenant_name(lake, tenant, tmp_path):
    before = _authors(lake)
    result = CliRunner().invoke(cli, ["erase", "--tenant", tenant, "--author", "user:u1"])
    assert result.exit_code == 2, result.output
    assert _authors(lake) == before
    assert not [p for p in tmp_path.rglob("*") if "escape" in p.name] and not lake.read_erasure_log("acme")
    outside = Path(settings.lake_root()).parent.parent / "escape"
    assert not outside.exists()


def test_an_erasure_whose_index_step_fails_is_logged_and_finished_by_running_it_again(lake, monkeypatch, es_cluster):
    from crawl_assets.index.sink import index_documents

    rows = [r for _, t in lake.read_parts(TABLE, "acme", "intercom", SOURCE) for r in t.to_pylist()]
    es, client = es_cluster, es_cluster.client
    from crawl_assets.lake.tables import arrow_to_records

    docs = [d for _, t in lake.read_parts(TABLE, "acme", "intercom", SOURCE) for d in arrow_to_records(t)]
    index_documents(client, docs, family="records", tenant="acme", deadletter_root=settings.lake_root())
    down = _erase("--author", "user:u1", "--es-url", "http://127.0.0.1:9")  # nothing listens there
    assert down.exit_code == 1, down.output
    [entry] = lake.read_erasure_log("acme")
    assert entry["status"] != "complete" and not entry["index_erased"]
    assert "user:u1" not in _authors(lake), "the lake step ran"
    client.indices.refresh(index="crawl-records-acme")
    theirs = client.count(index="crawl-records-acme", query={"term": {"author_id": "user:u1"}})["count"]
    assert theirs == len([r for r in rows if r["author_id"] == "user:u1"]) > 0
    again = _erase("--author", "user:u1", "--es-url", es.url)
    assert again.exit_code == 0, again.output
    client.indices.refresh(index="crawl-records-acme")
    assert client.count(index="crawl-records-acme", query={"term": {"author_id": "user:u1"}})["count"] == 0
    assert client.count(index="crawl-records-acme", query={"term": {"author_id": "user:u2"}})["count"] > 0
    log = lake.read_erasure_log("acme")
    assert len(log) == 2 and log[-1]["status"] == "complete" and log[-1]["index_erased"]
