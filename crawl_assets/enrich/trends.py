"""Trends: per tenant and time window, hashtags and terms whose frequency rises significantly against the
preceding windows, each with the numbers that explain its score.

Per record (``extract``): the record's hashtags and its terms (words of ``text_clean``, casefolded, links,
@handles and #tags left out, at least ``min_term_length`` letters, not a stop word, not only digits), each
once per record, one row per (record, term), plus one ``record`` row per record (so that a later
observation with no term at all still replaces an earlier one's terms).

Per tenant (``combine``), over the latest observation of each record: the records per window (UTC,
``window_hours`` long, aligned to the epoch) for each term. A (term, window) trends when

* ``count`` >= ``min_count`` records, and ``count`` >= ``min_ratio`` x the baseline;
* ``baseline`` = the mean count over the ``history`` windows before it (windows before the tenant's first
  record do not count; at least ``min_history`` of them are needed);
* the Poisson upper tail ``p_value`` = P(X >= count | lambda = max(baseline, ``baseline_floor``)) is at most
  ``max_p_value``.

``score`` = -log10(p_value). Each trend row keeps ``count``, ``baseline``, ``baseline_counts`` (the preceding
windows' counts, oldest first), ``ratio``, ``p_value`` and ``method``, and the ``explanation`` sentence.
The ``windows`` table holds the counts per window of every term that reached ``min_count`` in some window,
for plotting what the trend rows summarize.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.enrich.base import STAMP_NAMES, CombineContext, Enricher, feature_document
from crawl_assets.enrich.columns import _iso
from crawl_assets.enrich.stopwords import STOPWORDS

_TS = pa.timestamp("us", tz="UTC")
_DROP = r"https?://\S+|www\.\S+|[@#][\pL\pN_\x{200c}]+"
_SPLIT = r"[^\pL\pN_\x{200c}]+"
_ONLY_DIGITS = r"^[\pN_\x{200c}]+$"
RECORD = "record"  # term_kind of the row that says a record was observed


class Trends(Enricher):
    name: ClassVar[str] = "trends"
    version: ClassVar[str] = "1"
    scope: ClassVar[str] = "tenant"  # type: ignore[assignment]
    columns: ClassVar[tuple[str, ...]] = ("key", "tenant", "created_at", "hashtags", "text_clean")
    tables: ClassVar[tuple[str, ...]] = ("trends", "windows")
    combine_columns: ClassVar[tuple[str, ...]] = ("key", "created_at", "term_kind", "term")
    description: ClassVar[str] = "Hashtags and terms rising significantly against the preceding windows " \
                                 "(Poisson tail vs the mean of earlier windows), with counts and baseline."

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {"window_hours": 24, "history": 7, "min_history": 3, "min_count": 5, "min_ratio": 2.0,
                "max_p_value": 0.001, "baseline_floor": 0.5, "min_term_length": 3, "terms": True}

    def validate(self) -> None:
        p = self.params
        for name in ("window_hours", "history", "min_history", "min_count", "min_term_length"):
            if not (isinstance(p[name], int) and p[name] >= 1):
                raise ValueError(f"trends: {name!r} must be a positive integer")
        if p["min_history"] > p["history"]:
            raise ValueError("trends: 'min_history' cannot exceed 'history'")
        if not 0 < p["max_p_value"] < 1 or p["baseline_floor"] <= 0 or p["min_ratio"] < 1:
            raise ValueError("trends: need 0 < max_p_value < 1, baseline_floor > 0 and min_ratio >= 1")

    @property
    def part_schema(self) -> pa.Schema:
        return self.stamped_schema([pa.field("key", pa.string()), pa.field("tenant", pa.string()),
                                    pa.field("created_at", _TS), pa.field("term_kind", pa.string()),
                                    pa.field("term", pa.string())])

    def extract(self, records: pa.Table) -> pa.Table:
        # one "record" row per record whatever it holds: a later observation without any term still replaces
        # the earlier one's terms
        seen = self.table(self.part_schema, {"key": records.column("key"), "tenant": records.column("tenant"),
                                             "created_at": records.column("created_at"),
                                             "term_kind": pa.array([RECORD] * records.num_rows, pa.string()),
                                             "term": pa.array([""] * records.num_rows, pa.string())})
        parts = [seen, self._exploded(records, records.column("hashtags"), "hashtag")]
        if self.params["terms"]:
            text = pc.utf8_lower(pc.fill_null(records.column("text_clean"), ""))
            words = pc.split_pattern_regex(pc.replace_substring_regex(text, _DROP, " "), _SPLIT)
            parts.append(self._exploded(records, words, "term"))
        return pa.concat_tables(parts)

    def _exploded(self, records: pa.Table, lists: Any, kind: str) -> pa.Table:
        lists = lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists
        terms = pc.list_flatten(lists)
        parent = pc.list_parent_indices(lists).to_numpy().astype(np.int64)
        # each distinct term once: the rules run over the dictionary, and rows pair a record with a term id
        encoded = pc.dictionary_encode(terms)
        ids = pc.fill_null(encoded.indices, -1).to_numpy().astype(np.int64) + 1  # 0: a null term
        if kind == "term":
            words = encoded.dictionary
            rule = pc.and_(pc.greater_equal(pc.utf8_length(words), self.params["min_term_length"]),
                           pc.invert(pc.or_(pc.is_in(words, value_set=STOPWORDS),
                                            pc.match_substring_regex(words, _ONLY_DIGITS))))
            keep = np.r_[False, rule.to_numpy(zero_copy_only=False)][ids]  # (a null term is no word)
            positions = np.flatnonzero(keep)
        else:
            positions = np.arange(len(ids))
        # each (record, term) once, in order of first appearance
        code = parent[positions] * (len(encoded.dictionary) + 1) + ids[positions]
        first = positions[np.sort(np.unique(code, return_index=True)[1])]
        rows = pa.array(parent[first])
        return self.table(self.part_schema, {
            "key": records.column("key").take(rows), "tenant": records.column("tenant").take(rows),
            "created_at": records.column("created_at").take(rows),
            "term_kind": pa.repeat(pa.scalar(kind, pa.string()), len(first)), "term": terms.take(first)})

    # -- per tenant -------------------------------------------------------------------------------------
    def combine(self, rows: Iterable[pa.Table], context: CombineContext) -> dict[str, pa.Table]:
        tables = [t.select(["key", "created_at", "term_kind", "term"]).append_column(
            "part", pa.array(np.full(t.num_rows, i, np.int32))) for i, t in enumerate(rows)]
        tables = [t for t in tables if t.num_rows]
        if not tables:
            return {"trends": self.trend_schema.empty_table(), "windows": self.window_schema.empty_table()}
        terms = pa.concat_tables(tables)
        # the latest part holding a key is its latest observation: only that part's terms count. The record
        # rows (one per observation) tell whether any key was observed in two parts, or twice at all
        seen = terms.filter(pc.equal(terms.column("term_kind"), RECORD)).select(["key", "part"])
        keys = pc.count_distinct(seen.column("key")).as_py()
        if seen.group_by(["key", "part"], use_threads=False).aggregate([]).num_rows != keys:
            last = terms.group_by("key", use_threads=False).aggregate([("part", "max")])
            terms = terms.join(last, "key").filter(pc.equal(pc.field("part"), pc.field("part_max")))
        if keys == seen.num_rows:
            terms = terms.select(["created_at", "term_kind", "term"])  # (the key is not needed to count)
        terms = terms.filter(pc.and_(pc.is_valid(terms.column("created_at")),
                                     pc.not_equal(terms.column("term_kind"), RECORD)))
        step = self.params["window_hours"] * 3600 * 1_000_000
        micros = pc.cast(terms.column("created_at"), pa.int64()).to_numpy()
        window = micros // step * step  # the window's start (epoch microseconds; floor, also before 1970)
        if keys == seen.num_rows:  # one observation per key: a (record, term) row is there once, so count rows
            counts = _count_rows(terms, window, step)
        else:
            terms = terms.append_column("window", pa.array(window, pa.int64()))
            counts = terms.group_by(["term_kind", "term", "window"], use_threads=False).aggregate(
                [("key", "count_distinct")])
        return self._score(counts, int(window.min()), step, context)

    def _score(self, counts: pa.Table, first_window: int, step: int, ctx: CombineContext) -> dict[str, pa.Table]:
        from scipy.stats import poisson  # (scipy loads in ~0.3 s: only when trends are computed)

        p = self.params
        candidates = counts.filter(pc.greater_equal(counts.column("key_count_distinct"), p["min_count"]))
        wanted = candidates.select(["term_kind", "term"]).group_by(["term_kind", "term"]).aggregate([])
        counts = counts.join(wanted, ["term_kind", "term"], join_type="inner").sort_by(
            [("term_kind", "ascending"), ("term", "ascending"), ("window", "ascending")])
        kinds, terms = counts.column("term_kind").to_pylist(), counts.column("term").to_pylist()
        windows = ((counts.column("window").to_numpy() - first_window) // step).astype(np.int64)
        values = counts.column("key_count_distinct").to_numpy().astype(np.int64)
        trend_cols: dict[str, list[Any]] = {f.name: [] for f in self.trend_schema if f.name not in STAMP_NAMES}
        start = 0
        while start < len(terms):
            end = start
            while end < len(terms) and terms[end] == terms[start] and kinds[end] == kinds[start]:
                end += 1
            self._term_trends(kinds[start], terms[start], windows[start:end], values[start:end], first_window,
                              step, ctx, trend_cols, poisson.sf)
            start = end
        width = timedelta(hours=p["window_hours"])
        starts = pc.cast(counts.column("window"), _TS)
        window_cols = {"term_kind": counts.column("term_kind"), "term": counts.column("term"),
                       "window_start": starts, "window_end": pc.add(starts, pa.scalar(width, pa.duration("us"))),
                       "count": pc.cast(counts.column("key_count_distinct"), pa.int64())}
        return {"trends": self.table(self.trend_schema, trend_cols),
                "windows": self.table(self.window_schema, window_cols)}

    def _term_trends(self, kind: str, term: str, idx: np.ndarray, values: np.ndarray, first_window: int, step: int,
                     ctx: CombineContext, out: dict[str, list[Any]], tail: Any) -> None:
        p = self.params
        dense = np.zeros(int(idx.max()) + 1, dtype=np.int64)
        dense[idx] = values
        history = p["history"]
        for w, count in zip(idx.tolist(), values.tolist()):
            if count < p["min_count"]:
                continue
            lo = max(0, w - history)
            before = dense[lo:w]
            if len(before) < p["min_history"]:
                continue
            baseline = float(before.mean())
            lam = max(baseline, p["baseline_floor"])
            ratio = count / lam
            if ratio < p["min_ratio"]:
                continue
            p_value = float(tail(count - 1, lam))
            if p_value > p["max_p_value"]:
                continue
            start = _micros_to_dt(first_window + w * step)
            label = f"#{term}" if kind == "hashtag" else term
            method = f"poisson_tail_vs_mean_of_{len(before)}_preceding_{p['window_hours']}h_windows"
            explanation = (f"{label}: {count} records in the {p['window_hours']} h window from {_iso(start)} vs a "
                           f"mean of {baseline:.2f} over the {len(before)} preceding windows "
                           f"{before.tolist()}; P(X >= {count} | Poisson {lam:.2f}) = {p_value:.3g}")
            for name, value in (("term_kind", kind), ("term", term), ("window_start", start),
                                ("window_end", start + timedelta(hours=p["window_hours"])), ("count", count),
                                ("baseline", round(baseline, 4)), ("baseline_counts", before.tolist()),
                                ("ratio", round(ratio, 4)), ("p_value", p_value),
                                ("score", round(-np.log10(max(p_value, 1e-300)), 4)), ("method", method),
                                ("explanation", explanation), ("generated_at", ctx.generated_at)):
                out[name].append(value)

    @property
    def trend_schema(self) -> pa.Schema:
        return self.stamped_schema([
            pa.field("term_kind", pa.string()), pa.field("term", pa.string()), pa.field("window_start", _TS),
            pa.field("window_end", _TS), pa.field("count", pa.int64()), pa.field("baseline", pa.float64()),
            pa.field("baseline_counts", pa.list_(pa.int64())), pa.field("ratio", pa.float64()),
            pa.field("p_value", pa.float64()), pa.field("score", pa.float64()), pa.field("method", pa.string()),
            pa.field("explanation", pa.string()), pa.field("generated_at", _TS)])

    @property
    def window_schema(self) -> pa.Schema:
        return self.stamped_schema([pa.field("term_kind", pa.string()), pa.field("term", pa.string()),
                                    pa.field("window_start", _TS), pa.field("window_end", _TS),
                                    pa.field("count", pa.int64())])

    def documents(self, table: str, rows: pa.Table, context: CombineContext | None) -> Iterator[dict[str, Any]]:
        assert context is not None
        if table != "trends":
            return
        for row in rows.to_pylist():
            start = _iso(row["window_start"])
            info = {k: row[k] for k in ("term_kind", "term", "count", "baseline", "baseline_counts", "ratio",
                                        "p_value", "score", "method", "explanation")}
            info.update(window_start=start, window_end=_iso(row["window_end"]),
                        window_hours=self.params["window_hours"])
            term_id = hashlib.blake2b(f"{row['term_kind']}:{row['term']}".encode(), digest_size=8).hexdigest()
            yield feature_document(self, f"{row['term_kind']}:{term_id}:{start}", "trend",
                                   tenant=context.tenant, created_at=start, updated_at=_iso(context.generated_at),
                                   trends=info)


def _count_rows(terms: pa.Table, window: np.ndarray, step: int) -> pa.Table:
    """Rows per (term_kind, term, window), as ``group_by(...).aggregate([("key", "count_distinct")])`` gives
    when no (key, term_kind, term) repeats: one sort of integer codes instead of hashing strings per group."""
    term = pc.dictionary_encode(terms.column("term").combine_chunks())
    kinds = pc.dictionary_encode(terms.column("term_kind").combine_chunks())
    first = int(window.min())
    slots = (window - first) // step
    width, n_kinds = int(slots.max()) + 1, len(kinds.dictionary)
    code = (term.indices.to_numpy().astype(np.int64) * n_kinds + kinds.indices.to_numpy()) * width + slots
    unique, count = np.unique(code, return_counts=True)
    cell = unique // width
    return pa.table({"term_kind": kinds.dictionary.take(pa.array(cell % n_kinds)),
                     "term": term.dictionary.take(pa.array(cell // n_kinds)),
                     "window": pa.array(first + unique % width * step, pa.int64()),
                     "key_count_distinct": pa.array(count, pa.int64())})


def _micros_to_dt(micros: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=int(micros))
