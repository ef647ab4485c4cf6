"""Aggregations over one tenant's filtered records: counts over time, top values, and the overview counts
(live, deleted, edited, superseded). Bucket counts are bounded: a timeline never has more than
``MAX_TIMELINE_BUCKETS`` buckets (checked before the query runs, from the range or the data's own span),
a top list never more than ``MAX_TOP``.

Each query is written once as ``*_query`` (``query.steps``: run by the blocking function of its name, or
by an asyncio client in the API)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.query import steps
from crawl_assets.query.filters import RecordFilter, scoped_query
from crawl_assets.index.documents import group_forms
from crawl_assets.index.naming import parse_instant, read_alias
from crawl_assets.persian import jalali

MAX_TIMELINE_BUCKETS = 2000
CALENDARS = ("gregorian", "jalali")
MAX_TOP = 1000
# Calendar intervals the timeline takes, with their longest length (for the bucket bound).
INTERVALS: dict[str, timedelta] = {"minute": timedelta(minutes=1), "hour": timedelta(hours=1),
                                   "day": timedelta(days=1), "week": timedelta(weeks=1),
                                   "month": timedelta(days=28), "quarter": timedelta(days=89),
                                   "year": timedelta(days=365)}
# What a top list can rank: the API's name -> the indexed field.
TOP_FIELDS: dict[str, str] = {"hashtags": "hashtags", "authors": "author_id", "mentions": "mentions",
                              "languages": "lang", "sources": "source", "platforms": "platform", "kinds": "kind"}


class TooManyBuckets(ValueError):
    """The timeline would need more buckets than allowed; the message says what to change."""


def run(client: Elasticsearch, tenant: str, body: dict[str, Any]) -> dict[str, Any]:
    """One ``size: 0`` search through the tenant's alias; a tenant without an index gets empty aggregations."""
    return steps.run(client, aggregate(tenant, body))


def aggregate(tenant: str, body: dict[str, Any]) -> steps.Query[dict[str, Any]]:
    try:
        return (yield from steps.call("search", index=read_alias("records", tenant), ignore_unavailable=True, size=0,
                                      track_total_hits=True, **body))
    except NotFoundError:
        return {"hits": {"total": {"value": 0}}, "aggregations": {}}


def _span(tenant: str, flt: RecordFilter) -> steps.Query[tuple[datetime, datetime] | None]:
    resp = yield from aggregate(tenant, {"query": scoped_query(tenant, flt),
                                "aggs": {"lo": {"min": {"field": "created_at"}}, "hi": {"max": {"field": "created_at"}}}})
    aggs = resp.get("aggregations") or {}
    lo, hi = (aggs.get(k, {}).get("value") for k in ("lo", "hi"))
    if lo is None or hi is None:
        return None
    return parse_instant(int(lo)), parse_instant(int(hi))


def timeline(client: Elasticsearch, tenant: str, flt: RecordFilter, interval: str = "day",
             time_zone: str = "UTC", calendar: str = "gregorian") -> list[dict[str, Any]]:
    """Records per calendar ``interval`` in ``time_zone`` (empty buckets inside the range included):
    ``[{"start": ISO, "count": n}]``; with ``calendar="jalali"`` months, quarters and years follow the Jalali
    calendar, weeks start on Saturday, and each bucket carries its ``jalali`` name."""
    return steps.run(client, timeline_query(tenant, flt, interval, time_zone, calendar))


def timeline_query(tenant: str, flt: RecordFilter, interval: str = "day", time_zone: str = "UTC",
                   calendar: str = "gregorian") -> steps.Query[list[dict[str, Any]]]:
    if calendar not in CALENDARS:
        raise ValueError(f"unknown calendar {calendar!r}; expected one of {', '.join(CALENDARS)}")
    if interval not in INTERVALS:
        raise ValueError(f"unknown interval {interval!r}; expected one of {', '.join(INTERVALS)}")
    span = (flt.start, flt.end) if flt.start and flt.end else (yield from _span(tenant, flt))
    if span is None:
        return []
    lo = flt.start or span[0]
    hi = flt.end or span[1]
    buckets = int((hi - lo) / INTERVALS[interval]) + 2
    if buckets > MAX_TIMELINE_BUCKETS:
        raise TooManyBuckets(f"a {interval} timeline from {lo.isoformat()} to {hi.isoformat()} would have about "
                             f"{buckets} buckets (at most {MAX_TIMELINE_BUCKETS}): choose a longer interval or a "
                             "shorter range (start, end)")
    if calendar == "jalali" and interval in jalali.STEP_MONTHS:
        return (yield from _jalali_ranges(tenant, flt, interval, time_zone, lo, hi))
    hist: dict[str, Any] = {"field": "created_at", "calendar_interval": interval, "time_zone": time_zone,
                            "min_doc_count": 0}
    if calendar == "jalali" and interval == "week":
        hist["offset"] = "-2d"  # Iranian weeks start on Saturday (calendar weeks on Monday)
    if flt.start and flt.end:
        # extended bounds are rounded to calendar weeks before the offset applies: shifted by it, they round
        # to the Saturday weeks holding them
        shift = timedelta(days=2) if "offset" in hist else timedelta(0)
        hist["extended_bounds"] = {"min": (flt.start + shift).isoformat(),
                                   "max": (flt.end - timedelta(milliseconds=1) + shift).isoformat()}
    resp = yield from aggregate(tenant, {"query": scoped_query(tenant, flt), "aggs": {"t": {"date_histogram": hist}}})
    rows = (resp.get("aggregations") or {}).get("t", {}).get("buckets", [])
    if calendar == "jalali":
        zone = ZoneInfo(time_zone)
        return [{"start": b["key_as_string"], "count": b["doc_count"],
                 "jalali": jalali.label(parse_instant(int(b["key"])), interval, zone)} for b in rows]
    return [{"start": b["key_as_string"], "count": b["doc_count"]} for b in rows]


def _jalali_ranges(tenant: str, flt: RecordFilter, interval: str, time_zone: str, lo: datetime,
                   hi: datetime) -> steps.Query[list[dict[str, Any]]]:
    """Jalali months, quarters or years as explicit ranges (a date histogram knows only Gregorian ones):
    local midnights of their first days in ``time_zone``; the last bucket ends at the next one's start."""
    zone = ZoneInfo(time_zone)
    cuts = jalali.boundaries(lo, hi - timedelta(milliseconds=1) if flt.end else hi, interval, zone)
    ranges = [{"key": str(i), "from": a.isoformat(), "to": b.isoformat()} for i, (a, b) in enumerate(zip(cuts, cuts[1:]))]
    resp = yield from aggregate(tenant, {"query": scoped_query(tenant, flt), "aggs": {"t": {"date_range": {
        "field": "created_at", "keyed": True, "ranges": ranges}}}})
    got = (resp.get("aggregations") or {}).get("t", {}).get("buckets", {})
    return [{"start": a.isoformat(), "count": int(got.get(str(i), {}).get("doc_count", 0)),
             "jalali": jalali.label(a, interval, zone)} for i, a in enumerate(cuts[:-1])]


def top(client: Elasticsearch, tenant: str, flt: RecordFilter, what: str, size: int = 20,
        lemmas: bool = False) -> dict[str, Any]:
    """The ``size`` most frequent values of ``what`` (a ``TOP_FIELDS`` name) among the filtered records:
    ``{"buckets": [{"value", "count"}...], "other": n, "missing": n}``; authors carry their platform and handle.
    ``lemmas`` (hashtags): a bucket per lemma with its ``forms``."""
    return steps.run(client, top_query(tenant, flt, what, size, lemmas))


def top_query(tenant: str, flt: RecordFilter, what: str, size: int = 20,
              lemmas: bool = False) -> steps.Query[dict[str, Any]]:
    if what not in TOP_FIELDS:
        raise ValueError(f"unknown field {what!r}; expected one of {', '.join(TOP_FIELDS)}")
    if not 1 <= size <= MAX_TOP:
        raise ValueError(f"size must be between 1 and {MAX_TOP}")
    if lemmas:
        if what != "hashtags":
            raise ValueError("lemmas apply to hashtags only")
        return (yield from _top_lemmas(tenant, flt, size))
    field = TOP_FIELDS[what]
    terms: dict[str, Any] = {"terms": {"field": field, "size": size, "shard_size": max(size * 2, 100)}}
    if what == "authors":
        terms["aggs"] = {"handle": {"terms": {"field": "author_handle", "size": 1}},
                         "platform": {"terms": {"field": "platform", "size": 1}}}
    resp = yield from aggregate(tenant, {"query": scoped_query(tenant, flt),
                                         "aggs": {"top": terms, "missing": {"missing": {"field": field}}}})
    aggs = resp.get("aggregations") or {}
    out = []
    for b in aggs.get("top", {}).get("buckets", []):
        row: dict[str, Any] = {"value": b["key"], "count": b["doc_count"]}
        if what == "authors":
            row["handle"] = next((h["key"] for h in b["handle"]["buckets"]), None)
            row["platform"] = next((h["key"] for h in b["platform"]["buckets"]), None)
        out.append(row)
    return {"buckets": out, "other": aggs.get("top", {}).get("sum_other_doc_count", 0),
            "missing": aggs.get("missing", {}).get("doc_count", 0)}


def _top_lemmas(tenant: str, flt: RecordFilter, size: int) -> steps.Query[dict[str, Any]]:
    """Hashtags counted by lemma: the ``5 * size`` most used tags grouped by lemma, then, per lemma, the
    records holding any of its forms (a record with two forms counts once); a bucket's ``value`` is its most
    used form, ``lemma`` the key they share; ``other``: records with a tag outside every listed form."""
    query = scoped_query(tenant, flt)
    resp = yield from aggregate(tenant, {"query": query, "aggs": {
        "tags": {"terms": {"field": "hashtags", "size": size * 5, "shard_size": max(size * 10, 100)}},
        "missing": {"missing": {"field": "hashtags"}}}})
    aggs = resp.get("aggregations") or {}
    seen = {b["key"]: b["doc_count"] for b in aggs.get("tags", {}).get("buckets", [])}
    groups = group_forms(list(seen), "hashtags")
    if not groups:
        return {"buckets": [], "other": 0, "missing": aggs.get("missing", {}).get("doc_count", 0)}
    listed = sorted(seen)
    per = yield from aggregate(tenant, {"query": query, "aggs": {
        "lemma": {"filters": {"filters": {lem: {"terms": {"hashtags": forms}} for lem, forms in groups.items()}}},
        "other": {"filter": {"bool": {"filter": [{"exists": {"field": "hashtags"}}],
                                      "must_not": [{"terms": {"hashtags": listed}}]}}}}})
    got = (per.get("aggregations") or {})
    counted = {lem: int(b["doc_count"]) for lem, b in got.get("lemma", {}).get("buckets", {}).items()}
    ranked = sorted(groups, key=lambda lem: (-counted.get(lem, 0), lem))[:size]
    buckets = []
    for lem in ranked:
        forms = sorted(({"form": f, "count": seen[f]} for f in groups[lem]), key=lambda r: (-r["count"], r["form"]))
        buckets.append({"value": forms[0]["form"], "lemma": lem, "count": counted.get(lem, 0), "forms": forms})
    return {"buckets": buckets, "other": int(got.get("other", {}).get("doc_count", 0)),
            "missing": aggs.get("missing", {}).get("doc_count", 0)}


def counts(client: Elasticsearch, tenant: str, flt: RecordFilter) -> dict[str, int]:
    """Among the filtered records, tombstones included whatever the filter says: ``records`` (all),
    ``live``, ``deleted``, ``edited`` (an ``edited_at``), ``superseded`` (earlier versions of an edited X post)."""
    return steps.run(client, counts_query(tenant, flt))


def counts_query(tenant: str, flt: RecordFilter) -> steps.Query[dict[str, int]]:
    everything = replace(flt, deleted="include")
    aggs = {"deleted": {"filter": {"term": {"deleted": True}}},
            "edited": {"filter": {"exists": {"field": "edited_at"}}},
            "superseded": {"filter": {"exists": {"field": "metadata.superseded_by"}}}}
    resp = yield from aggregate(tenant, {"query": scoped_query(tenant, everything), "aggs": aggs})
    total = int(resp["hits"]["total"]["value"])
    got = resp.get("aggregations") or {}
    deleted = int(got.get("deleted", {}).get("doc_count", 0))
    return {"records": total, "live": total - deleted, "deleted": deleted,
            "edited": int(got.get("edited", {}).get("doc_count", 0)),
            "superseded": int(got.get("superseded", {}).get("doc_count", 0))}
