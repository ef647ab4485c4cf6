"""Topics per tenant: an unsupervised topic model (NMF on TF-IDF) over the tenant's records, each record
assigned its topics with weights, each topic described by its top terms and the surface forms seen most.

Per normalized part (``extract``): each record's terms (``terms.py``: Persian, Arabic and English words of
``text_clean``, light stems) as a ``record`` row (its latest row in the part), and the part's counts of
each (stem, surface form) as ``form`` rows.

Per tenant (``combine``), over the latest observation of each record:

* vocabulary: stems in at least ``min_df`` records and at most ``max_df`` of them, the ``max_terms`` most
  frequent; TF-IDF with sublinear term frequency and smooth idf, rows scaled to unit length (scikit-learn's
  ``TfidfTransformer`` rules);
* fit: ``sklearn.decomposition.NMF`` (``topics`` components, NNDSVDA start, coordinate descent, ``seed``) on
  at most ``fit_sample`` records with at least ``min_terms`` terms (reposts left out: they copy a text), a
  random sample when there are more; every record is then projected on the topics (NMF ``transform``, in
  chunks: memory follows the sample, not the tenant);
* refit policy: the fitted model (vocabulary, idf, components) is kept as the ``model`` table and reused
  while the stamp is the same, the tenant's record count has changed by less than ``refit_growth`` of the
  count it was fitted on and it is younger than ``refit_days``; otherwise the model is fitted again;
* assignment: a record's topic weights scaled to sum 1; the topics with at least ``min_weight`` (at most
  ``max_per_record``, heaviest first) are its topics;
* stable ids: a new fit's topics are matched to the known topic ids (``topic_ids``, kept across fits and
  erasures: ids and top stems only) by the Jaccard overlap of their top ``top_terms`` stems, one to one
  (Hungarian assignment, scipy); a pair overlapping at least ``match_overlap`` keeps its id, any other topic
  gets a new id (never one used before), so a topic's timeline spans fits where the topic persists.

Tables: ``topics`` (id, label, top stems with weights, top surface forms, records, share, first and last
seen), ``assignments`` (one row per record with a topic: its ids and weights), ``model`` (the fitted model),
and the ``topic_ids`` state. A topic is a pattern of co-occurring words, not a label someone chose: read its
terms and records before naming it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.enrich.base import CombineContext, Enricher, feature_document
from crawl_assets.enrich.columns import CONTEXT_COLUMNS, CONTEXT_FIELDS, _iso, context, last_rows
from crawl_assets.enrich.terms import terms as text_terms
from crawl_assets.enrich.topic_model import (FORM, RECORD, TRANSFORM_CHUNK, TS, Corpus, Model, match_ids,
                                             registry_table)

LABEL_FORMS = 3
EXTRACT_SLICE = 10_000  # records whose terms are Python lists at once in a part's extract


class Topics(Enricher):
    name: ClassVar[str] = "topics"
    version: ClassVar[str] = "1"
    scope: ClassVar[str] = "tenant"  # type: ignore[assignment]
    columns: ClassVar[tuple[str, ...]] = (*CONTEXT_COLUMNS, "kind", "text_clean")
    tables: ClassVar[tuple[str, ...]] = ("topics", "assignments", "model")
    previous_tables: ClassVar[tuple[str, ...]] = ("model",)
    state_tables: ClassVar[tuple[str, ...]] = ("topic_ids",)
    description: ClassVar[str] = "Topics per tenant (NMF on TF-IDF of Persian/Arabic/English terms), each record's " \
                                 "topics with weights, topic ids kept across re-fits by term overlap."

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {"topics": 20, "min_df": 3, "max_df": 0.5, "max_terms": 20_000, "min_terms": 3, "min_weight": 0.2,
                "max_per_record": 3, "top_terms": 10, "fit_sample": 200_000, "max_iter": 300, "refit_growth": 0.2,
                "refit_days": 7, "match_overlap": 0.3, "seed": 1}

    def validate(self) -> None:
        p = self.params
        for name in ("topics", "min_df", "max_terms", "min_terms", "max_per_record", "top_terms", "fit_sample",
                     "max_iter", "seed"):
            if not (isinstance(p[name], int) and not isinstance(p[name], bool) and p[name] >= (0 if name == "seed" else 1)):
                raise ValueError(f"topics: {name!r} must be a positive integer")
        if p["topics"] > 500:
            raise ValueError("topics: 'topics' must be at most 500")
        for name in ("max_df", "min_weight", "match_overlap"):
            if not (isinstance(p[name], (int, float)) and 0 < p[name] <= 1):
                raise ValueError(f"topics: {name!r} must be in (0, 1]")
        if not (isinstance(p["refit_growth"], (int, float)) and p["refit_growth"] >= 0):
            raise ValueError("topics: 'refit_growth' must be >= 0 (0: fit every time)")
        if not (isinstance(p["refit_days"], (int, float)) and p["refit_days"] >= 0):
            raise ValueError("topics: 'refit_days' must be >= 0")

    # -- per part ---------------------------------------------------------------------------------------
    @property
    def part_schema(self) -> pa.Schema:
        return self.stamped_schema([*CONTEXT_FIELDS, pa.field("row_kind", pa.string()),
                                    pa.field("repost", pa.bool_()), pa.field("terms", pa.list_(pa.string())),
                                    pa.field("term", pa.string()), pa.field("form", pa.string()),
                                    pa.field("count", pa.int64())])

    def extract(self, records: pa.Table) -> pa.Table:
        """One ``record`` row per key (its last row in the part) with its stems, and the part's (stem, form)
        counts as ``form`` rows."""
        rows = np.flatnonzero(last_rows(records.column("key")))
        texts = records.column("text_clean")
        stems: list[pa.Array] = []  # per slice of records: the Python terms of EXTRACT_SLICE records at a time
        forms: dict[tuple[str, str], int] = {}
        for start in range(0, len(rows), EXTRACT_SLICE):
            mine: list[list[str]] = []
            for text in texts.take(pa.array(rows[start:start + EXTRACT_SLICE])).to_pylist():
                pairs = text_terms(text or "")
                mine.append([s for s, _ in pairs])
                for pair in pairs:
                    forms[pair] = forms.get(pair, 0) + 1
            stems.append(pa.array(mine, pa.list_(pa.string())))
        n, m = len(rows), len(forms)
        ctx = context(records, pa.array(rows, pa.int64()))
        columns: dict[str, Any] = {f.name: pa.concat_arrays([ctx[f.name].combine_chunks() if isinstance(
            ctx[f.name], pa.ChunkedArray) else ctx[f.name], pa.nulls(m, f.type)]) for f in CONTEXT_FIELDS}
        repost = pc.fill_null(pc.equal(records.column("kind").take(pa.array(rows)), "repost"), False).to_pylist() \
            if "kind" in records.column_names else [False] * n
        columns.update({
            "row_kind": [RECORD] * n + [FORM] * m,
            "repost": repost + [None] * m,
            "terms": pa.concat_arrays([*stems, pa.nulls(m, pa.list_(pa.string()))]),
            "term": [None] * n + [s for s, _ in forms], "form": [None] * n + [f for _, f in forms],
            "count": [None] * n + list(forms.values())})
        return self.table(self.part_schema, columns)

    # -- per tenant -------------------------------------------------------------------------------------
    def combine(self, rows: Iterable[pa.Table], context: CombineContext) -> dict[str, pa.Table]:
        corpus = Corpus.read(rows)
        p = self.params
        previous_model = context.previous.get("model")
        known = context.previous.get("topic_ids")
        model = Model.from_table(previous_model) if previous_model is not None else None
        if model is None or not self._reusable(model, previous_model, corpus, context.generated_at):
            model = self._fit(corpus, context.generated_at)
            ids, registry = match_ids(model.top_stems(p["top_terms"]), known, p["match_overlap"],
                                      context.generated_at)
            model.topic_ids = ids
        else:
            registry = known if known is not None else registry_table([], [], [], [])
        weights = model.project(corpus, p["max_iter"]) if model.components.size else np.zeros((corpus.rows, 0))
        assignments = self._assign(corpus, model, weights)
        topics = self._describe(corpus, model, assignments, context)
        out = {"topics": topics, "assignments": assignments, "model": model.to_table(self)}
        out["topic_ids"] = self.table(self.ids_schema, {c: registry.column(c) for c in self.ids_schema.names
                                                        if c not in ("enricher", "enricher_version", "inferred")})
        return out

    def _reusable(self, model: "Model", table: pa.Table, corpus: "Corpus", now: datetime) -> bool:
        p = self.params
        stamp = table.column("enricher_version")[0].as_py() if table.num_rows else None
        if stamp != self.stamp or p["refit_growth"] == 0 or not model.topic_ids:
            return False
        if abs(corpus.rows - model.fitted_records) > p["refit_growth"] * max(model.fitted_records, 1):
            return False
        return now - model.fitted_at < timedelta(days=p["refit_days"])

    def _fit(self, corpus: "Corpus", now: datetime) -> "Model":
        from sklearn.decomposition import NMF

        p = self.params
        vocab, idf = corpus.vocabulary(p["min_df"], p["max_df"], p["max_terms"])
        counts = corpus.distinct_terms(vocab)
        eligible = np.flatnonzero((counts >= p["min_terms"]) & ~corpus.repost)
        k = min(p["topics"], len(eligible), len(vocab))
        if k < 1:  # nothing to fit: no topics
            return Model(np.array([], dtype=object), np.zeros(0), np.zeros((0, 0), np.float32), [], now, corpus.rows)
        rng = np.random.default_rng(p["seed"])
        sample = np.sort(rng.choice(eligible, p["fit_sample"], replace=False)) if len(eligible) > p["fit_sample"] \
            else eligible
        nmf = NMF(n_components=k, init="nndsvda", solver="cd", max_iter=p["max_iter"], random_state=p["seed"],
                  tol=1e-4)
        with np.errstate(invalid="ignore"):  # a near-exact fit (a small corpus) rounds the unused
            nmf.fit(corpus.tfidf_rows(vocab, idf, sample))  # reconstruction_err_ below 0: sqrt warned, NaN
        return Model(corpus.words[vocab], idf, nmf.components_.astype(np.float32), [], now, corpus.rows)

    def _assign(self, corpus: "Corpus", model: "Model", weights: np.ndarray) -> pa.Table:
        p = self.params
        total = weights.sum(axis=1)
        has = np.flatnonzero(total > 0)
        chunks = []  # in chunks: the sort holds (records x topics) int64 for one chunk only
        for start in range(0, len(has), TRANSFORM_CHUNK):
            at = has[start:start + TRANSFORM_CHUNK]
            share = weights[at] / total[at, None]
            order = np.argsort(-share, axis=1, kind="stable")[:, :p["max_per_record"]]
            top = np.take_along_axis(share, order, axis=1)
            keep = top >= p["min_weight"]
            some = keep.any(axis=1)
            chunks.append((at[some], order[some], top[some], keep[some]))
        m = min(p["max_per_record"], weights.shape[1])
        rows, order, top, keep = (np.concatenate(c) for c in zip(*chunks)) if chunks else (
            np.zeros(0, np.int64), np.zeros((0, m), np.int64), np.zeros((0, m), weights.dtype), np.zeros((0, m), bool))
        ids_of = np.asarray(model.topic_ids, dtype=np.int32)
        counts = keep.sum(axis=1)
        offsets = pa.array(np.r_[0, np.cumsum(counts)].astype(np.int32))
        flat_ids = ids_of[order[keep]] if len(ids_of) else np.zeros(0, np.int32)
        flat_w = np.round(top[keep], 4).astype(np.float32)
        ctx = {f.name: corpus.context[f.name].take(pa.array(rows, pa.int64())) for f in CONTEXT_FIELDS}
        return self.table(self.assignment_schema, {
            **ctx, "topic_ids": pa.ListArray.from_arrays(offsets, pa.array(flat_ids, pa.int32())),
            "weights": pa.ListArray.from_arrays(offsets, pa.array(flat_w, pa.float32())),
            "topic_id": pa.array(flat_ids[np.r_[0, np.cumsum(counts)][:-1]] if len(rows) else [], pa.int32()),
            "weight": pa.array(flat_w[np.r_[0, np.cumsum(counts)][:-1]] if len(rows) else [], pa.float32())})

    def _describe(self, corpus: "Corpus", model: "Model", assignments: pa.Table, ctx: CombineContext) -> pa.Table:
        p = self.params
        forms = corpus.top_forms()
        lists = assignments.column("topic_ids").combine_chunks()
        flat = pc.list_flatten(lists).to_numpy()  # (record, topic) pairs as arrays: no Python object per record
        created = assignments.column("created_at").combine_chunks().take(pc.list_parent_indices(lists))
        cols: dict[str, list[Any]] = {n: [] for n in ("topic_id", "label", "terms", "term_weights", "forms", "records",
                                                       "share", "first_seen", "last_seen", "fitted_at",
                                                       "fitted_records", "generated_at")}
        assigned = max(assignments.num_rows, 1)
        for component, topic in sorted(enumerate(model.topic_ids), key=lambda x: x[1]):
            weights = model.components[component]
            top = np.argsort(-weights, kind="stable")[:p["top_terms"]]
            top = top[weights[top] > 0]
            stems = [str(model.words[i]) for i in top]
            surface = list(dict.fromkeys(forms.get(s, s) for s in stems))
            mine = flat == topic
            records = int(np.count_nonzero(mine))
            seen = pc.min_max(created.filter(pa.array(mine)))
            cols["topic_id"].append(topic)
            cols["label"].append(" · ".join(surface[:LABEL_FORMS]))
            cols["terms"].append(stems)
            cols["term_weights"].append([round(float(weights[i]), 4) for i in top])
            cols["forms"].append(surface)
            cols["records"].append(records)
            cols["share"].append(round(records / assigned, 4))
            cols["first_seen"].append(seen["min"].as_py())
            cols["last_seen"].append(seen["max"].as_py())
            cols["fitted_at"].append(model.fitted_at)
            cols["fitted_records"].append(model.fitted_records)
            cols["generated_at"].append(ctx.generated_at)
        return self.table(self.topic_schema, cols)

    # -- schemas ----------------------------------------------------------------------------------------
    @property
    def topic_schema(self) -> pa.Schema:
        return self.stamped_schema([
            pa.field("topic_id", pa.int32()), pa.field("label", pa.string()), pa.field("terms", pa.list_(pa.string())),
            pa.field("term_weights", pa.list_(pa.float64())), pa.field("forms", pa.list_(pa.string())),
            pa.field("records", pa.int64()), pa.field("share", pa.float64()), pa.field("first_seen", TS),
            pa.field("last_seen", TS), pa.field("fitted_at", TS), pa.field("fitted_records", pa.int64()),
            pa.field("generated_at", TS)])

    @property
    def assignment_schema(self) -> pa.Schema:
        return self.stamped_schema([*CONTEXT_FIELDS, pa.field("topic_ids", pa.list_(pa.int32())),
                                    pa.field("weights", pa.list_(pa.float32())), pa.field("topic_id", pa.int32()),
                                    pa.field("weight", pa.float32())])

    @property
    def model_schema(self) -> pa.Schema:
        return self.stamped_schema([pa.field("term", pa.string()), pa.field("idf", pa.float64()),
                                    pa.field("weights", pa.list_(pa.float32()))])

    @property
    def ids_schema(self) -> pa.Schema:
        return self.stamped_schema([pa.field("topic_id", pa.int32()), pa.field("terms", pa.list_(pa.string())),
                                    pa.field("first_fitted", TS), pa.field("last_fitted", TS)])

    # -- index ------------------------------------------------------------------------------------------
    def documents(self, table: str, rows: pa.Table, context: CombineContext | None) -> Iterator[dict[str, Any]]:
        assert context is not None
        updated = _iso(context.generated_at)
        if table == "topics":
            for row in rows.to_pylist():
                info = {k: row[k] for k in ("topic_id", "label", "terms", "term_weights", "forms", "records", "share",
                                            "fitted_records")}
                info.update(first_seen=_iso(row["first_seen"]), last_seen=_iso(row["last_seen"]),
                            fitted_at=_iso(row["fitted_at"]))
                yield feature_document(self, f"topic:{row['topic_id']}", "topic", tenant=context.tenant,
                                       created_at=_iso(row["first_seen"]), updated_at=updated, topics=info)
        elif table == "assignments":
            for row in rows.to_pylist():
                yield feature_document(
                    self, row["key"], "record", tenant=row["tenant"], record_key=row["key"], platform=row["platform"],
                    source=row["source"], author_id=row["author_id"], created_at=_iso(row["created_at"]),
                    deleted_at=_iso(row["deleted_at"]), updated_at=updated,
                    topics={"ids": row["topic_ids"], "weights": [round(w, 4) for w in row["weights"]],
                            "topic_id": row["topic_id"], "weight": round(row["weight"], 4)})
