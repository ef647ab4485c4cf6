"""Templates, aliases and retention against the test server (or a real cluster)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from crawl_assets.index.indices import (count_documents, expired_months, index_stats, load_template, setup_indices,
                                        tenant_indices)
from crawl_assets.index.naming import FAMILIES, index_name, read_alias, template_name
from crawl_assets.index.sink import index_documents
from crawl_assets_tests.index.conftest import EsTarget
from crawl_assets_tests.index.docs import record


def test_setup_is_idempotent_and_gives_existing_indices_their_alias(es: EsTarget) -> None:
    bare = index_name("records", es.tenant, "2024.05")
    es.client.indices.create(index=bare)  # e.g. created by hand or by an older version, without the alias

    first = setup_indices(es.client, [es.tenant])
    second = setup_indices(es.client, [es.tenant])

    assert first.aliases_added == [f"{bare} -> {read_alias('records', es.tenant)}"]
    assert second.aliases_added == [] and second.deleted == []
    for family in FAMILIES:
        got = es.client.indices.get_index_template(name=template_name(family))["index_templates"][0]
        assert got["index_template"]["index_patterns"] == [f"crawl-{family}-*"]
    assert read_alias("records", es.tenant) in tenant_indices(es.client, "records", es.tenant)[bare]


def test_templates_map_what_analysts_query() -> None:
    props = load_template("records")["template"]["mappings"]["properties"]
    # one analyzed copy of the text (the cleaned one, with its ZWNJ-joined form); the text as observed is kept
    assert props["text_clean"]["analyzer"] == "persian_text" and set(props["text_clean"]["fields"]) == {"joined"}
    assert props["text"] == {"type": "text", "index": False}
    assert props["hashtags"]["type"] == props["mentions"]["type"] == "keyword"
    assert props["metadata"]["type"] == "flattened"
    assert props["created_at"]["type"] == "date"
    assert props["provenance"]["properties"]["raw_pointer"]["index"] is False
    analysis = load_template("records")["template"]["settings"]["analysis"]
    assert "persian_normalization" in analysis["analyzer"]["persian_text"]["filter"]


def test_templated_indices_get_the_mappings(es: EsTarget, tmp_path: Path) -> None:
    index_documents(es.client, [record(1, es.tenant)], family="records", tenant=es.tenant,
                    deadletter_root=str(tmp_path))
    name = index_name("records", es.tenant, "2026.01")
    mapping = es.client.indices.get(index=name)[name]["mappings"]
    assert mapping["properties"]["metadata"]["type"] == "flattened"


def test_expired_months_keep_the_current_month_and_the_ones_before() -> None:
    now = datetime(2026, 3, 15, tzinfo=timezone.utc)
    months = ["2025.11", "2025.12", "2026.01", "2026.02", "2026.03"]
    assert expired_months(months, 3, now) == ["2025.11", "2025.12"]
    assert expired_months(months, 12, now) == []
    with pytest.raises(ValueError):
        expired_months(months, 0, now)


def test_retention_deletes_whole_months_of_that_tenant_only(es: EsTarget, tmp_path: Path) -> None:
    other = es.tenant + "-keep"
    docs = [record(i, es.tenant, year=y, month=m) for i, (y, m) in enumerate(
        [(2025, 10), (2025, 11), (2025, 12), (2026, 1), (2026, 2), (2026, 3)])]
    try:
        index_documents(es.client, docs, family="records", tenant=es.tenant, deadletter_root=str(tmp_path))
        index_documents(es.client, [record(1, other, year=2025, month=10)], family="records", tenant=other,
                        deadletter_root=str(tmp_path))
        now = datetime(2026, 3, 20, tzinfo=timezone.utc)

        planned = setup_indices(es.client, [es.tenant, other], {es.tenant: 3}, now=now, dry_run=True)
        assert count_documents(es.client, es.tenant) == 6
        report = setup_indices(es.client, [es.tenant, other], {es.tenant: 3}, now=now)

        expected = [index_name("records", es.tenant, m) for m in ("2025.10", "2025.11", "2025.12")]
        assert planned.deleted == report.deleted == expected
        assert sorted(tenant_indices(es.client, "records", es.tenant)) == [
            index_name("records", es.tenant, m) for m in ("2026.01", "2026.02", "2026.03")]
        assert count_documents(es.client, es.tenant) == 3
        assert count_documents(es.client, other) == 1
        rows = index_stats(es.client, "records", es.tenant)
        assert [r.month for r in rows] == ["2026.01", "2026.02", "2026.03"] and all(r.docs == 1 for r in rows)
    finally:
        es.client.indices.delete(index=index_name("records", other, "2025.10"), ignore_unavailable=True)
