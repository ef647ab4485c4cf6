"""Index naming and external versions: pure functions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawl_assets.index.naming import (
    RoutingError,
    compose,
    decompose,
    index_for,
    index_name,
    month_of,
    observation_version,
    parse_index,
    parse_instant,
    read_alias,
)


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
    assert index_for("records", "acme", "2026-03-04T00:00:00Z") == "crawl-records-acme.2026.03"
    assert index_for("edges", "acme", None) == "crawl-edges-acme.undated"
    assert index_for("authors", "acme", "2026-03-04T00:00:00Z") == "crawl-authors-acme.all"
    assert read_alias("records", "acme") == "crawl-records-acme"
    assert parse_index("crawl-records-acme-eu.2026.03") == ("records", "acme-eu", "2026.03")
    assert parse_index("crawl-edges-acme.undated") == ("edges", "acme", None)
    assert parse_index("crawl-records-acme-eu-2026.03") is None  # the earlier scheme: see parse_legacy_index
    assert parse_index("crawl-records-acme") is None       # the alias, not an index
    assert parse_index("logs-2026.03") is None
    with pytest.raises(ValueError, match="tenant"):
        index_name("records", "Acme Corp", "2026.01")
    with pytest.raises(ValueError, match="family"):
        index_name("tweets", "acme", "2026.01")


@given(st.sampled_from(["records", "edges"]), st.from_regex(r"[a-z0-9](?:[a-z0-9]|[_-](?=[a-z0-9])){0,20}", fullmatch=True),
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


_INSTANTS = [None, "", "2026-01-05T12:00:00Z", "2026-01-05T12:00:00+03:30", "2025-12-31T23:59:59", "not a date",
             1767312000000, "1999-01-01T00:00:00Z", "2300-01-01T00:00:00Z"]


def _reference_version(doc: dict, default: int | None) -> int | None:
    """The documented rule written plainly: latest parsable edit time, then collection time."""
    def seconds(value: object) -> int | None:
        try:
            return None if value in (None, "") else int(parse_instant(value).timestamp())
        except RoutingError:
            return None

    edits = [s for s in (seconds(doc.get(k)) for k in ("edited_at", "deleted_at", "created_at", "updated_at"))
             if s is not None]
    provenance = doc.get("provenance")
    collected = seconds((provenance.get("collected_at") if isinstance(provenance, dict) else None)
                        or doc.get("collected_at") or doc.get("observed_at"))
    if not edits:
        if collected is None:
            return default
        edits = [collected]
    return compose(max(edits), collected)


@given(st.dictionaries(st.sampled_from(["created_at", "edited_at", "deleted_at", "updated_at", "collected_at",
                                        "observed_at"]), st.sampled_from(_INSTANTS)),
       st.one_of(st.none(), st.fixed_dictionaries({"collected_at": st.sampled_from(_INSTANTS)})),
       st.sampled_from([None, 0]))
@settings(max_examples=400, deadline=None)
def test_observation_version_follows_the_documented_rule(times: dict, provenance: dict | None,
                                                         default: int | None) -> None:
    doc = {**times, "provenance": provenance} if provenance is not None else times
    expected = _reference_version(doc, default)
    if expected is None:
        with pytest.raises(RoutingError):
            observation_version(doc, default=default)
    else:
        assert observation_version(doc, default=default) == expected


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
