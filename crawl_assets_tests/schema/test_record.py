"""The public record contract: field names, UTC instants, bounded rejection snippets, JSON Schema export."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from crawl_assets.cli.normalize import schema as schema_command
from crawl_assets.schema import Edge, Provenance, Record, Rejection, record_json_schema, snippet_of

CONTRACT_FIELDS = [
    "key", "platform", "tenant", "source", "kind", "native_id", "author_id", "author_handle", "created_at",
    "edited_at", "deleted", "deleted_at", "text", "text_clean", "lang", "reply_to", "quote_of", "repost_of",
    "conversation_id", "hashtags", "mentions", "urls", "media", "metrics", "metadata", "provenance", "enrichment",
]  # fmt: skip


def _record(**changes) -> Record:
    fields = {
        "key": "x:1", "platform": "x", "tenant": "t", "source": "s", "kind": "post", "native_id": "1",
        "created_at": datetime(2024, 5, 1, 10, tzinfo=timezone.utc),
        "provenance": Provenance(method="api", source="s", format="x-v2"),
    }  # fmt: skip
    fields.update(changes)
    return Record(**fields)


def test_record_fields_are_the_contract_in_order():
    assert list(Record.model_fields) == CONTRACT_FIELDS
    assert list(record_json_schema()["properties"]) == CONTRACT_FIELDS


def test_instants_are_stored_and_written_as_utc_with_z():
    tehran = timezone(timedelta(hours=3, minutes=30))
    record = _record(created_at=datetime(2024, 5, 1, 13, 30, tzinfo=tehran), edited_at="2024-05-01T12:00:00+02:00")
    assert record.created_at == datetime(2024, 5, 1, 10, tzinfo=timezone.utc)
    assert record.created_at.tzinfo is timezone.utc
    dumped = json.loads(record.model_dump_json())
    assert dumped["created_at"] == "2024-05-01T10:00:00Z"
    assert dumped["edited_at"] == "2024-05-01T10:00:00Z"
    assert Record.model_validate_json(record.model_dump_json()) == record


def test_naive_datetimes_and_unknown_fields_are_refused():
    with pytest.raises(ValidationError, match="timezone"):
        _record(created_at=datetime(2024, 5, 1, 10))
    with pytest.raises(ValidationError, match="extra"):
        _record(retweets=3)
    with pytest.raises(ValidationError):
        _record(platform="myspace")


def test_enrichment_is_apart_and_empty_by_default():
    record = _record()
    assert record.enrichment == {} and record.metadata == {}
    assert record.deleted is False and record.deleted_at is None


def test_rejection_snippet_is_bounded():
    raw = b'{"text": "' + "س".encode() * 5000 + b'"}'
    snippet = snippet_of(raw)
    assert len(snippet) <= 500
    rejection = Rejection(name="f.jsonl", line=3, reason="bad", snippet=snippet)
    assert rejection.error is True
    with pytest.raises(ValidationError):
        Rejection(name="f", line=1, reason="r", snippet="x" * 600)


def test_edge_model():
    edge = Edge(type="reply", src="x:2", dst="x:1", created_at="2024-05-01T10:00:00Z", platform="x", tenant="t")
    assert edge.model_dump(mode="json")["created_at"] == "2024-05-01T10:00:00Z"
    with pytest.raises(ValidationError):
        Edge(type="like", src="x:2", dst="x:1", platform="x", tenant="t")


@pytest.mark.parametrize("model", ["record", "edge", "rejection"])
def test_schema_command_prints_json_schema(model):
    result = CliRunner().invoke(schema_command, ["--model", model])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["type"] == "object"
    if model == "record":
        assert document == json.loads(json.dumps(record_json_schema()))
        assert document["properties"]["created_at"]["format"] == "date-time"
