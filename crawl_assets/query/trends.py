"""Trends: hashtags, mentions or words whose frequency in a window rises against the windows before it.

The score, step by step (every number is returned, so a result can be checked by hand):

1. Windows: the current window ``W0 = [end - L, end)`` and ``k`` baseline windows of the same length just
   before it (``W1 = [end - 2L, end - L)``, ...). ``N_i`` = the filtered records in window ``i``.
2. Candidates: the ``candidates`` most frequent items of ``W0`` (hashtags and mentions: a terms aggregation;
   words: Elasticsearch's ``significant_text`` on ``text_clean`` against the baseline windows). An item
   rare in ``W0`` cannot trend, so nothing that could score high is left out by this step.
3. Counts: ``c`` = records of ``W0`` holding the item, ``b_i`` = records of ``W_i`` holding it.
4. Baseline: the item's share of the baseline's records, ``p = sum(b_i) / sum(N_i)``, and the count that share
   predicts for the current window, ``expected = p * N0`` (so a window that is busier overall does not
   make every item "rise").
5. Score: ``(c - expected) / sqrt(expected + 1)``: how many Poisson standard deviations the count is above
   what the baseline predicts (the ``+ 1`` keeps items never seen before from dividing by zero: an item
   new in ``W0`` with ``c`` records scores ``c``). Also ``ratio = (c + 1) / (expected + 1)``.
6. Kept: items with ``c >= min_count`` and ``c > expected``, highest score first (ties: higher ``c``, then name).

With ``lemmas=True`` (hashtags and words) an item is a lemma (``persian.lemma``): the candidates
of step 2 (three times as many) are grouped by their lemma, a word's counts are the records whose
``text_lemma`` holds it, a hashtag lemma's the records holding any of its forms among the candidates; an
item is named by its most used form (``item``) beside the ``lemma`` its forms share, with its ``forms`` (the
surface forms, most used in the current window first, with their counts).
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from elasticsearch import Elasticsearch

from crawl_assets.query.aggregations import run
from crawl_assets.query.filters import RecordFilter, scoped_query
from crawl_assets.index.documents import LEMMA_FIELD, group_forms
from crawl_assets.normalize.text import clean_text

TREND_FIELDS = {"hashtags": "hashtags", "mentions": "mentions", "words": "text_clean"}
MAX_BASELINE_WINDOWS = 12
MAX_CANDIDATES = 500
MAX_WINDOW = timedelta(days=366)
MIN_WINDOW = timedelta(minutes=5)


def windows(end: datetime, length: timedelta, baseline: int) -> list[tuple[datetime, datetime]]:
    """``[W0, W1, ..., Wk]``, newest first, each ``(start, end)``."""
    return [(end - (i + 1) * length, end - i * length) for i in range(baseline + 1)]


def _ranges(wins: list[tuple[datetime, datetime]]) -> dict[str, Any]:
    return {"date_range": {"field": "created_at", "keyed": True, "ranges": [
        {"key": f"w{i}", "from": lo.isoformat(), "to": hi.isoformat()} for i, (lo, hi) in enumerate(wins)]}}


def _candidates(client: Elasticsearch, tenant: str, flt: RecordFilter, field: str, wins, size: int,
                span: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    current = {"range": {"created_at": {"gte": wins[0][0].isoformat(), "lt": wins[0][1].isoformat()}}}
    if field == "text_clean":
        background = {"bool": {"filter": [scoped_query(tenant, replace(flt, start=wins[-1][0], end=wins[0][0]))]}}
        pick = {"sampler": {"shard_size": 2000}, "aggs": {"items": {"significant_text": {
            "field": field, "size": size, "min_doc_count": 1, "filter_duplicate_text": True,
            "background_filter": background}}}}
    else:
        pick = {"terms": {"field": field, "size": size}}
    resp = run(client, tenant, {"query": span, "aggs": {"volume": _ranges(wins), "current": {
        "filter": current, "aggs": {"pick": pick}}}})
    aggs = resp.get("aggregations") or {}
    pick_out = aggs.get("current", {}).get("pick", {})
    buckets = pick_out.get("items", pick_out).get("buckets", [])
    return [str(b["key"]) for b in buckets], aggs.get("volume", {}).get("buckets", {})


def _item_counts(client: Elasticsearch, tenant: str, field: str, items: list[str], wins, span) -> dict[str, list[int]]:
    if field == "text_clean":
        per = {"filters": {"filters": {t: {"match": {field: {"query": t, "operator": "and"}}} for t in items}},
               "aggs": {"w": _ranges(wins)}}
    else:
        per = {"terms": {"field": field, "include": items, "size": len(items)}, "aggs": {"w": _ranges(wins)}}
    resp = run(client, tenant, {"query": span, "aggs": {"items": per}})
    raw = (resp.get("aggregations") or {}).get("items", {}).get("buckets", {})
    rows = raw.items() if isinstance(raw, dict) else ((b["key"], b) for b in raw)
    return {str(k): [int(b["w"]["buckets"][f"w{i}"]["doc_count"]) for i in range(len(wins))] for k, b in rows}


def _form_counts(client: Elasticsearch, tenant: str, field: str, forms: list[str], wins, span) -> dict[str, int]:
    """Records of the current window holding each surface form."""
    current = {"range": {"created_at": {"gte": wins[0][0].isoformat(), "lt": wins[0][1].isoformat()}}}
    clause = (lambda f: {"match": {field: {"query": f, "operator": "and"}}}) if field == "text_clean" else (
        lambda f: {"term": {field: f}})
    resp = run(client, tenant, {"query": {"bool": {"filter": [span, current]}},
                                "aggs": {"f": {"filters": {"filters": {f: clause(f) for f in forms}}}}})
    buckets = (resp.get("aggregations") or {}).get("f", {}).get("buckets", {})
    return {f: int(b.get("doc_count", 0)) for f, b in buckets.items()}


def _lemma_counts(client: Elasticsearch, tenant: str, field: str, groups: dict[str, list[str]], wins,
                  span) -> dict[str, list[int]]:
    clause = (lambda lem, forms: {"term": {LEMMA_FIELD: lem}}) if field == "text_clean" else (
        lambda lem, forms: {"terms": {field: forms}})
    per = {"filters": {"filters": {lem: clause(lem, forms) for lem, forms in groups.items()}},
           "aggs": {"w": _ranges(wins)}}
    resp = run(client, tenant, {"query": span, "aggs": {"items": per}})
    raw = (resp.get("aggregations") or {}).get("items", {}).get("buckets", {})
    return {k: [int(b["w"]["buckets"][f"w{i}"]["doc_count"]) for i in range(len(wins))] for k, b in raw.items()}


def trends(client: Elasticsearch, tenant: str, flt: RecordFilter, *, what: str = "hashtags", end: datetime,
           window: timedelta, baseline: int = 4, candidates: int = 200, min_count: int = 3,
           size: int = 20, lemmas: bool = False) -> dict[str, Any]:
    """Rising items of ``what`` (``hashtags``, ``mentions`` or ``words``) in ``[end - window, end)`` (see the
    module docstring for the score). The filter's own date range is ignored: the windows are the range."""
    if what not in TREND_FIELDS:
        raise ValueError(f"unknown trend field {what!r}; expected one of {', '.join(TREND_FIELDS)}")
    if not MIN_WINDOW <= window <= MAX_WINDOW:
        raise ValueError(f"window must be between {MIN_WINDOW} and {MAX_WINDOW.days} days")
    if not 1 <= baseline <= MAX_BASELINE_WINDOWS:
        raise ValueError(f"baseline must be between 1 and {MAX_BASELINE_WINDOWS} windows")
    if not 1 <= candidates <= MAX_CANDIDATES:
        raise ValueError(f"candidates must be between 1 and {MAX_CANDIDATES}")
    if lemmas and what == "mentions":
        raise ValueError("lemmas apply to hashtags and words, not to mentions")
    field = TREND_FIELDS[what]
    wins = windows(end, window, baseline)
    span = scoped_query(tenant, replace(flt, start=wins[-1][0], end=wins[0][1]))
    items, volume = _candidates(client, tenant, flt, field, wins, candidates * 3 if lemmas else candidates, span)
    totals = [int(volume.get(f"w{i}", {}).get("doc_count", 0)) for i in range(len(wins))]
    forms: dict[str, list[dict[str, Any]]] = {}
    if lemmas and items:
        groups = group_forms(items, what, "ar" if flt.langs == ("ar",) else None)
        per_item = _lemma_counts(client, tenant, field, groups, wins, span)
        seen = _form_counts(client, tenant, field, items, wins, span)
        # significant_text answers the analyzer's tokens (Arabic ي ك): shown in Persian letters, as text_clean is
        forms = {lem: sorted(({"form": clean_text(f), "count": seen.get(f, 0)} for f in fs),
                             key=lambda r: (-r["count"], r["form"])) for lem, fs in groups.items()}
    else:
        per_item = _item_counts(client, tenant, field, items, wins, span) if items else {}
    base_total = sum(totals[1:])
    rows = []
    for item, counts in per_item.items():
        c, past = counts[0], counts[1:]
        share = sum(past) / base_total if base_total else 0.0
        expected = share * totals[0]
        if c < min_count or c <= expected:
            continue
        rows.append({"item": item, "count": c, "baseline_counts": past,
                     "baseline_mean": round(sum(past) / len(past), 4), "baseline_share": round(share, 6),
                     "expected": round(expected, 4), "ratio": round((c + 1) / (expected + 1), 4),
                     "score": round((c - expected) / math.sqrt(expected + 1), 4),
                     **({"item": forms[item][0]["form"], "lemma": item, "forms": forms[item][:10]}
                        if lemmas and forms.get(item) else {})})
    rows.sort(key=lambda r: (-r["score"], -r["count"], r["item"]))
    return {"field": what, "lemmas": lemmas, "windows": [{"start": lo.isoformat(), "end": hi.isoformat(), "records": n}
                                       for (lo, hi), n in zip(wins, totals)],
            "items": rows[:size]}
