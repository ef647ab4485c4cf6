"""Trends: per tenant and time window, hashtags and terms whose frequency rises significantly against the
preceding windows, each with the numbers that explain its score.

Per normalized part (``extract``): each record's hashtags and its terms (words of ``text_clean``,
casefolded, links, @handles and #tags left out, at least ``min_term_length`` letters, not a stop word, not
only digits; with ``lemmas: true`` each word's lemma, so the forms of a word count together), each once per record, counted per window (UTC, ``window_hours`` long, aligned to the epoch):
one ``hashtag`` or ``term`` row per (term, window) of the part with its ``count`` of records, numbered by
``cell``; and one ``record`` row per key (its last row in the part) with the ``cells`` it added one to, so
that a later observation of the record (with other terms, or none) can take them away again.

Per tenant (``combine``), over the latest observation of each record (the latest part holding its key):
the parts' counts summed, less the cells of records a later part observed again. A (term, window) trends when

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
from crawl_assets.enrich.columns import _iso, last_rows
from crawl_assets.enrich.stopwords import STOPWORDS

_TS = pa.timestamp("us", tz="UTC")
_DROP = r"https?://\S+|www\.\S+|[@#][\pL\pN_\x{200c}]+"
_SPLIT = r"[^\pL\pN_\x{200c}]+"
_ONLY_DIGITS = r"^[\pN_\x{200c}]+$"
RECORD = "record"  # term_kind of the row that says a record was observed


class RisingTerms(Enricher):
    name: ClassVar[str] = "trends"
    version: ClassVar[str] = "3"  # 3: the lemmatizer's look-alike rules (persian.lemma) change lemmas: true terms
    scope: ClassVar[str] = "tenant"  # type: ignore[assignment]
    columns: ClassVar[tuple[str, ...]] = ("key", "tenant", "created_at", "hashtags", "text_clean")
    tables: ClassVar[tuple[str, ...]] = ("trends", "windows")
    combine_columns: ClassVar[tuple[str, ...]] = ("key", "term_kind", "term", "window_start", "count", "cell",
                                                     "cells")
    description: ClassVar[str] = "Hashtags and terms rising significantly against the preceding windows " \
                                 "(Poisson tail vs the mean of earlier windows), with counts and baseline."

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {"window_hours": 24, "history": 7, "min_history": 3, "min_count": 5, "min_ratio": 2.0,
                "max_p_value": 0.001, "baseline_floor": 0.5, "min_term_length": 3, "terms": True, "lemmas": False}

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
                                    pa.field("term", pa.string()), pa.field("window_start", _TS),
                                    pa.field("count", pa.int64()), pa.field("cell", pa.int32()),
                                    pa.field("cells", pa.list_(pa.int32()))])

    def extract(self, records: pa.Table) -> pa.Table:
        """The part's counts per (term, window) (``count`` rows, numbered by ``cell``), and one ``record`` row
        per key (its latest row in the part) listing the cells it added one to (``cells``): what ``combine``
        takes away when a later part observed the record again."""
        live = last_rows(records.column("key"))
        created = pc.cast(records.column("created_at"), pa.int64())
        dated = live & np.asarray(pc.is_valid(created).to_numpy(zero_copy_only=False), bool)
        step = self.params["window_hours"] * 3600 * 1_000_000
        slot = pc.fill_null(created, 0).to_numpy() // step  # the window (floor, also before 1970)
        kinds = [("hashtag", *_tag_pairs(records.column("hashtags")))]
        if self.params["terms"]:
            pairs = _word_pairs(records.column("text_clean"), self.params["min_term_length"])
            kinds.append(("term", *(_by_lemma(*pairs) if self.params["lemmas"] else pairs)))
        parents, ids, vocab, offset = [], [], [], 0
        for _, parent, term_id, words in kinds:
            keep = dated[parent]
            parents.append(parent[keep])
            ids.append(term_id[keep] + offset)
            vocab.append(words)
            offset += len(words)
        tags = len(vocab[0])  # term ids below it are hashtags
        # each (record, term) once, by record: each kind's pairs come by record already, so a stable sort of
        # their codes is little more than a merge
        pair = np.sort(np.concatenate(parents) * max(offset, 1) + np.concatenate(ids), kind="stable")
        pair = pair[np.r_[True, pair[1:] != pair[:-1]]] if len(pair) else pair
        parent, term_id = pair // max(offset, 1), pair % max(offset, 1)
        first = int(slot[dated].min()) if dated.any() else 0
        width = int(slot[dated].max()) - first + 1 if dated.any() else 1
        codes, cell_of, counts = _cells(term_id * width + (slot[parent] - first), offset * width)
        rows = np.flatnonzero(live)
        per_row = np.bincount(parent, minlength=len(live))[rows]
        cells = pa.ListArray.from_arrays(pa.array(np.r_[0, np.cumsum(per_row)].astype(np.int32)),
                                         pa.array(cell_of.astype(np.int32)))
        n, m = len(rows), len(codes)
        take = pa.array(rows)
        words = pa.concat_arrays([v.cast(pa.string()) for v in vocab])
        term_of = codes // width
        starts = pa.array((first + codes % width) * step, pa.int64()).cast(_TS)
        return self.table(self.part_schema, {
            "key": pa.concat_arrays([records.column("key").take(take).combine_chunks(), pa.nulls(m, pa.string())]),
            "tenant": pa.concat_arrays([records.column("tenant").take(take).combine_chunks(),
                                        pa.nulls(m, pa.string())]),
            "created_at": pa.concat_arrays([records.column("created_at").take(take).combine_chunks().cast(_TS),
                                            pa.nulls(m, _TS)]),
            "term_kind": pa.concat_arrays([pa.repeat(pa.scalar(RECORD), n).cast(pa.string()),
                                           pa.array(np.where(term_of < tags, "hashtag", "term"), pa.string())]),
            "term": pa.concat_arrays([pa.nulls(n, pa.string()), words.take(pa.array(term_of))]),
            "window_start": pa.concat_arrays([pa.nulls(n, _TS), starts]),
            "count": pa.concat_arrays([pa.nulls(n, pa.int64()), pa.array(counts, pa.int64())]),
            "cell": pa.concat_arrays([pa.nulls(n, pa.int32()), pa.array(np.arange(m, dtype=np.int32))]),
            "cells": pa.concat_arrays([cells, pa.nulls(m, pa.list_(pa.int32()))])})

    # -- per tenant -------------------------------------------------------------------------------------
    def combine(self, rows: Iterable[pa.Table], context: CombineContext) -> dict[str, pa.Table]:
        parts = [t for t in rows if t.num_rows]
        keys = [t.filter(pc.equal(t.column("term_kind"), RECORD)).column("key") for t in parts]
        superseded = _superseded(keys)
        counts = []
        for i, part in enumerate(parts):
            cells = part.filter(pc.not_equal(part.column("term_kind"), RECORD))
            values = cells.column("count").to_numpy()
            if i in superseded:  # records observed again in a later part: their earlier terms no longer count
                mine = part.filter(pc.equal(part.column("term_kind"), RECORD))
                lists = mine.column("cells").combine_chunks().filter(superseded[i])
                taken = np.bincount(pc.list_flatten(lists).to_numpy(), minlength=cells.num_rows)
                values = values - taken[cells.column("cell").to_numpy()]
            counts.append(pa.table({"term_kind": cells.column("term_kind"), "term": cells.column("term"),
                                    "window": pc.cast(cells.column("window_start"), pa.int64()),
                                    "count": pa.array(values, pa.int64())}))
        if not counts or not sum(t.num_rows for t in counts):
            return {"trends": self.trend_schema.empty_table(), "windows": self.window_schema.empty_table()}
        merged = _sum_counts(pa.concat_tables(counts))
        merged = merged.filter(pc.greater(merged.column("key_count_distinct"), 0))
        if not merged.num_rows:
            return {"trends": self.trend_schema.empty_table(), "windows": self.window_schema.empty_table()}
        step = self.params["window_hours"] * 3600 * 1_000_000
        return self._score(merged, int(pc.min(merged.column("window")).as_py()), step, context)

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


def _tag_pairs(lists: Any) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """(record row, tag id) of every hashtag, and the tags by id."""
    lists = lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists
    encoded = pc.dictionary_encode(pc.list_flatten(lists))
    parent = pc.list_parent_indices(lists).to_numpy().astype(np.int64)
    ids = pc.fill_null(encoded.indices, -1).to_numpy().astype(np.int64)
    tags = encoded.dictionary
    keep = (ids >= 0)
    keep[keep] = np.asarray(pc.greater(pc.utf8_length(tags), 0).to_numpy(zero_copy_only=False))[ids[keep]]
    return parent[keep], ids[keep], tags


def _word_pairs(texts: Any, min_length: int) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """(record row, word id) of every term of the texts, and the words by id.

    Split on spaces first (a space ends every match of ``_DROP`` and separates words, so this changes no
    word), then lowercase, drop and split each *distinct* space-separated token once: texts repeat their
    tokens, so the regular expressions run over the tokens' dictionary instead of over every text."""
    texts = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
    spaced = pc.split_pattern(pc.fill_null(texts, ""), " ")
    tokens = pc.dictionary_encode(pc.list_flatten(spaced))
    token_parent = pc.list_parent_indices(spaced).to_numpy().astype(np.int64)
    token_id = tokens.indices.to_numpy().astype(np.int64)
    split = pc.split_pattern_regex(pc.replace_substring_regex(pc.utf8_lower(tokens.dictionary), _DROP, " "), _SPLIT)
    words = pc.dictionary_encode(pc.list_flatten(split))
    rule = pc.and_(pc.greater_equal(pc.utf8_length(words.dictionary), min_length),
                   pc.invert(pc.or_(pc.is_in(words.dictionary, value_set=STOPWORDS),
                                    pc.match_substring_regex(words.dictionary, _ONLY_DIGITS))))
    word_id = words.indices.to_numpy().astype(np.int64)
    good = np.asarray(rule.to_numpy(zero_copy_only=False), bool)[word_id]
    # keep only the good words of each distinct token, then expand them to every occurrence of the token
    owner = pc.list_parent_indices(split).to_numpy().astype(np.int64)[good]
    word_id = word_id[good]
    per_token = np.bincount(owner, minlength=len(tokens.dictionary))
    starts = np.r_[0, np.cumsum(per_token)[:-1]]
    lengths = per_token[token_id]
    total = int(lengths.sum())
    base = np.repeat(starts[token_id] - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
    position = base + np.arange(total)
    return np.repeat(token_parent, lengths), word_id[position], words.dictionary


def _by_lemma(parent: np.ndarray, word_id: np.ndarray, words: pa.Array) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """``_word_pairs`` with each word replaced by its lemma (``lemmas: true``): the distinct words of a part
    are lemmatized once, forms of one lemma become one term."""
    from crawl_assets.persian.lemma import lemma

    lemmas = pc.dictionary_encode(pa.array([lemma(w) for w in words.to_pylist()], pa.string()))
    return parent, lemmas.indices.to_numpy().astype(np.int64)[word_id], lemmas.dictionary


def _cells(codes: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True, return_counts=True)``; by counting when the code space is
    small (the usual case: a part's words times its windows), else by sorting."""
    if space > max(4 * len(codes), 1 << 20):
        return np.unique(codes, return_inverse=True, return_counts=True)
    counts = np.bincount(codes, minlength=space)
    used = np.flatnonzero(counts)
    number = np.zeros(space, np.int64)
    number[used] = np.arange(len(used))
    return used, number[codes], counts[used]


def _superseded(keys: list[pa.ChunkedArray]) -> dict[int, np.ndarray]:
    """Per part index, the mask of its record rows whose key a later part holds too (latest part wins)."""
    total = sum(len(k) for k in keys)
    if total == 0:
        return {}
    every = pa.chunked_array([c for k in keys for c in k.chunks], pa.string())
    if pc.count_distinct(every).as_py() == total:
        return {}
    part = np.concatenate([np.full(len(k), i, np.int64) for i, k in enumerate(keys)])
    ids = pc.dictionary_encode(every.combine_chunks()).indices.to_numpy().astype(np.int64)
    latest = np.full(int(ids.max()) + 1, -1, np.int64)
    np.maximum.at(latest, ids, part)
    old = latest[ids] != part
    out, at = {}, 0
    for i, k in enumerate(keys):
        mask = old[at:at + len(k)]
        if mask.any():
            out[i] = mask
        at += len(k)
    return out


def _sum_counts(counts: pa.Table) -> pa.Table:
    """Records per (term_kind, term, window) over the parts (each part counted its own records once)."""
    out = counts.group_by(["term_kind", "term", "window"], use_threads=False).aggregate([("count", "sum")])
    return out.rename_columns(["term_kind", "term", "window", "key_count_distinct"])


def _micros_to_dt(micros: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=int(micros))
