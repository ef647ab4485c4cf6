"""Index naming and external versions: pure functions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawl_assets.index.naming import (
    RoutingError,
    index_for,
    index_name,
    month_of,
    parse_index,
    read_alias,
)
from crawl_assets.index.versioning import compose, decompose, observation_version


@pytest.mark.parametrize("value, month", [
    ("2026-11-30T03:17:00Z", "2026.11"),
    ("2026-11-30T03:17:00.123+00:00", "2026.11"),
    ("2026-11-30T23:30:00-05:00", "2026.12"),   # 04:30 UTC on Dec 1st
    ("2026-01-01T01:00:00+03:30", "2025.12"),   # Tehran time, still December in UTC
    ("2026-02-03", "2026.02"),
    (1767225600000, "2026.01"),                  # epoch milliseconds
])
def test_month_of_is_the_utc_month(value: object, month: str) -> None:
    assert month_of(value) == month


@pytest.mark.parametrize("bad", ["", "yesterday", None, True, {"a": 1}])
def test_unroutable_created_at_is_a_clear_error(bad: object) -> None:
    with pytest.raises(RoutingError, match="ISO 8601"):
        month_of(bad)


def test_names_and_aliases() -> None:
    assert index_for("records", "acme", "2026-03-04T00:00:00Z") == "crawl-records-acme-2026.03"
    assert index_for("edges", "acme", None) == "crawl-edges-acme-undated"
    assert index_for("authors", "acme", "2026-03-04T00:00:00Z") == "crawl-authors-acme-all"
    assert read_alias("records", "acme") == "crawl-records-acme"
    assert parse_index("crawl-records-acme-eu-2026.03") == ("records", "acme-eu", "2026.03")
    assert parse_index("crawl-edges-acme-undated") == ("edges", "acme", None)
    assert parse_index("crawl-records-acme") is None       # the alias, not an index
    assert parse_index("logs-2026.03") is None
    with pytest.raises(ValueError, match="tenant"):
        index_name("records", "Acme Corp", "2026.01")
    with pytest.raises(ValueError, match="family"):
        index_name("tweets", "acme", "2026.01")


@given(st.sampled_from(["records", "edges"]), st.from_regex(r"[a-z0-9][a-z0-9_-]{0,20}", fullmatch=True),
       st.integers(1970, 2200), st.integers(1, 12))
@settings(max_examples=200, deadline=None)
def test_index_names_parse_back(family: str, tenant: str, year: int, month: int) -> None:
    m = f"{year:04d}.{month:02d}"
    assert parse_index(index_name(family, tenant, m)) == (family, tenant, m)


def rec(edited: str | None, collected: str | None, deleted_at: str | None = None) -> dict:
    return {"created_at": "2026-01-01T00:00:00Z", "edited_at": edited, "deleted_at": deleted_at,
            "provenance": {"collected_at": collected}}


def test_edit_time_orders_before_collection_time() -> None:
    original = rec(None, "2026-06-01T00:00:00Z")                        # backfill collected late
    edit = rec("2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z")
    refresh = rec("2026-01-02T00:00:00Z", "2026-02-01T00:00:00Z")
    deletion = rec("2026-01-02T00:00:00Z", "2026-02-02T00:00:00Z", deleted_at="2026-02-02T00:00:00Z")
    versions = [observation_version(d) for d in (original, edit, refresh, deletion)]
    assert versions == sorted(versions) and len(set(versions)) == 4
    assert observation_version(edit) == observation_version(dict(edit))       # deterministic
    assert decompose(observation_version(edit)) == (1767312000, 86400)


def test_a_document_without_times_needs_a_default() -> None:
    with pytest.raises(RoutingError):
        observation_version({"key": "x:1"})
    assert observation_version({"type": "reply"}, default=0) == 0


@given(st.integers(946684800, 8_000_000_000), st.integers(0, 10**9), st.integers(946684800, 8_000_000_000),
       st.integers(0, 10**9))
@settings(max_examples=300, deadline=None)
def test_versions_order_like_edit_then_collection(e1: int, d1: int, e2: int, d2: int) -> None:
    v1, v2 = compose(e1, e1 + d1), compose(e2, e2 + d2)
    assert 0 <= v1 < 2**63
    assert (v1 < v2) == ((e1, d1) < (e2, d2))
