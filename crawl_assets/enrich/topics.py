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
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.enrich.base import CombineContext, Enricher, feature_document
from crawl_assets.enrich.columns import CONTEXT_COLUMNS, CONTEXT_FIELDS, _iso, context
from crawl_assets.enrich.terms import terms as text_terms

_TS = pa.timestamp("us", tz="UTC")
RECORD, FORM = "record", "form"
MODEL_META = b"crawl_assets.topics_model"
TRANSFORM_CHUNK = 20_000  # records projected at once
LABEL_FORMS = 3


class Topics(Enricher):
    name: ClassVar[str] = "topics"
    version: ClassVar[str] = "1"
    hash_source: ClassVar[bool] = False
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
        keys = records.column("key").to_pylist()
        last = {k: i for i, k in enumerate(keys)}
        rows = sorted(last.values())
        texts = records.column("text_clean").to_pylist()
        kinds = records.column("kind").to_pylist() if "kind" in records.column_names else [None] * len(keys)
        stems: list[list[str]] = []
        forms: dict[tuple[str, str], int] = {}
        for i in rows:
            pairs = text_terms(texts[i] or "")
            stems.append([s for s, _ in pairs])
            for pair in pairs:
                forms[pair] = forms.get(pair, 0) + 1
        n, m = len(rows), len(forms)
        ctx = context(records, rows)
        columns: dict[str, Any] = {f.name: pa.concat_arrays([ctx[f.name].combine_chunks() if isinstance(
            ctx[f.name], pa.ChunkedArray) else ctx[f.name], pa.nulls(m, f.type)]) for f in CONTEXT_FIELDS}
        columns.update({
            "row_kind": [RECORD] * n + [FORM] * m,
            "repost": [kinds[i] == "repost" for i in rows] + [None] * m,
            "terms": pa.array(stems + [None] * m, pa.list_(pa.string())),
            "term": [None] * n + [s for s, _ in forms], "form": [None] * n + [f for _, f in forms],
            "count": [None] * n + list(forms.values())})
        return self.table(self.part_schema, columns)

    # -- per tenant -------------------------------------------------------------------------------------
    def combine(self, rows: Iterable[pa.Table], context: CombineContext) -> dict[str, pa.Table]:
        corpus = _Corpus.read(rows)
        p = self.params
        previous_model = context.previous.get("model")
        known = context.previous.get("topic_ids")
        model = _Model.from_table(previous_model) if previous_model is not None else None
        if model is None or not self._reusable(model, previous_model, corpus, context.generated_at):
            model = self._fit(corpus, context.generated_at)
            ids, registry = match_ids(model.top_stems(p["top_terms"]), known, p["match_overlap"],
                                      context.generated_at)
            model.topic_ids = ids
        else:
            registry = known if known is not None else _registry_table([], [], [], [])
        weights = model.project(corpus, p["max_iter"]) if model.components.size else np.zeros((corpus.rows, 0))
        assignments = self._assign(corpus, model, weights)
        topics = self._describe(corpus, model, assignments, context)
        out = {"topics": topics, "assignments": assignments, "model": model.to_table(self)}
        out["topic_ids"] = self.table(self.ids_schema, {c: registry.column(c) for c in self.ids_schema.names
                                                        if c not in ("enricher", "enricher_version", "inferred")})
        return out

    def _reusable(self, model: "_Model", table: pa.Table, corpus: "_Corpus", now: datetime) -> bool:
        p = self.params
        stamp = table.column("enricher_version")[0].as_py() if table.num_rows else None
        if stamp != self.stamp or p["refit_growth"] == 0 or not model.topic_ids:
            return False
        if abs(corpus.rows - model.fitted_records) > p["refit_growth"] * max(model.fitted_records, 1):
            return False
        return now - model.fitted_at < timedelta(days=p["refit_days"])

    def _fit(self, corpus: "_Corpus", now: datetime) -> "_Model":
        from sklearn.decomposition import NMF

        p = self.params
        vocab, idf = corpus.vocabulary(p["min_df"], p["max_df"], p["max_terms"])
        x = corpus.tfidf(vocab, idf)
        counts = np.diff(x.indptr)
        eligible = np.flatnonzero((counts >= p["min_terms"]) & ~corpus.repost)
        k = min(p["topics"], len(eligible), len(vocab))
        if k < 1:  # nothing to fit: no topics
            return _Model(np.array([], dtype=object), np.zeros(0), np.zeros((0, 0), np.float32), [], now, corpus.rows)
        rng = np.random.default_rng(p["seed"])
        sample = np.sort(rng.choice(eligible, p["fit_sample"], replace=False)) if len(eligible) > p["fit_sample"] \
            else eligible
        nmf = NMF(n_components=k, init="nndsvda", solver="cd", max_iter=p["max_iter"], random_state=p["seed"],
                  tol=1e-4)
        nmf.fit(x[sample])
        return _Model(corpus.words[vocab], idf, nmf.components_.astype(np.float32), [], now, corpus.rows)

    def _assign(self, corpus: "_Corpus", model: "_Model", weights: np.ndarray) -> pa.Table:
        p = self.params
        total = weights.sum(axis=1)
        has = np.flatnonzero(total > 0)
        share = weights[has] / total[has, None]
        order = np.argsort(-share, axis=1, kind="stable")[:, :p["max_per_record"]]
        top = np.take_along_axis(share, order, axis=1)
        keep = top >= p["min_weight"]
        rows = has[keep.any(axis=1)]
        order, top, keep = order[keep.any(axis=1)], top[keep.any(axis=1)], keep[keep.any(axis=1)]
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

    def _describe(self, corpus: "_Corpus", model: "_Model", assignments: pa.Table, ctx: CombineContext) -> pa.Table:
        p = self.params
        forms = corpus.top_forms()
        per_topic: dict[int, list[datetime]] = {}
        for ids, created in zip(assignments.column("topic_ids").to_pylist(), assignments.column("created_at").to_pylist()):
            for topic in ids:
                per_topic.setdefault(topic, []).append(created)
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
            seen = [t for t in per_topic.get(topic, []) if t is not None]
            cols["topic_id"].append(topic)
            cols["label"].append(" · ".join(surface[:LABEL_FORMS]))
            cols["terms"].append(stems)
            cols["term_weights"].append([round(float(weights[i]), 4) for i in top])
            cols["forms"].append(surface)
            cols["records"].append(len(per_topic.get(topic, [])))
            cols["share"].append(round(len(per_topic.get(topic, [])) / assigned, 4))
            cols["first_seen"].append(min(seen) if seen else None)
            cols["last_seen"].append(max(seen) if seen else None)
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
            pa.field("records", pa.int64()), pa.field("share", pa.float64()), pa.field("first_seen", _TS),
            pa.field("last_seen", _TS), pa.field("fitted_at", _TS), pa.field("fitted_records", pa.int64()),
            pa.field("generated_at", _TS)])

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
                                    pa.field("first_fitted", _TS), pa.field("last_fitted", _TS)])

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


class _Corpus:
    """The tenant's records (latest observation of each key) as term ids, with their context and the
    (stem, form) counts of the parts."""

    def __init__(self) -> None:
        self.words = np.array([], dtype=object)
        self.rows = 0

    @classmethod
    def read(cls, parts: Iterable[pa.Table]) -> "_Corpus":
        index: dict[str, int] = {}
        words: list[str] = []
        offsets, ids, contexts, reposts = [], [], [], []
        forms: dict[tuple[str, str], int] = {}
        for part in parts:
            if not part.num_rows:
                continue
            kind = part.column("row_kind")
            mine = part.filter(pc.equal(kind, RECORD))
            for stem, form, count in zip(*(part.filter(pc.equal(kind, FORM)).column(c).to_pylist()
                                           for c in ("term", "form", "count"))):
                forms[(stem, form)] = forms.get((stem, form), 0) + count
            lists = mine.column("terms").combine_chunks()
            encoded = pc.dictionary_encode(pc.list_flatten(lists))
            local = np.empty(len(encoded.dictionary), np.int64)
            for j, word in enumerate(encoded.dictionary.to_pylist()):
                at = index.get(word)
                if at is None:
                    at = index[word] = len(words)
                    words.append(word)
                local[j] = at
            ids.append(local[encoded.indices.to_numpy()] if len(encoded.indices) else np.zeros(0, np.int64))
            offsets.append(np.diff(lists.offsets.to_numpy()))
            contexts.append(mine.select([f.name for f in CONTEXT_FIELDS]))
            reposts.append(np.asarray(pc.fill_null(mine.column("repost"), False).to_numpy(zero_copy_only=False), bool))
        corpus = cls()
        corpus.words = np.array(words, dtype=object)
        corpus.forms = forms
        if not contexts:
            corpus.context = pa.table({f.name: pa.array([], f.type) for f in CONTEXT_FIELDS})
            corpus.term_ids, corpus.lengths, corpus.repost = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, bool)
            return corpus
        table = pa.concat_tables(contexts)
        lengths = np.concatenate(offsets)
        term_ids = np.concatenate(ids)
        repost = np.concatenate(reposts)
        latest = _latest(table.column("key"))  # a key in several parts: its latest part's row
        keep_terms = np.repeat(latest, lengths)
        corpus.context = table.filter(pa.array(latest)).combine_chunks()
        corpus.term_ids, corpus.lengths, corpus.repost = term_ids[keep_terms], lengths[latest], repost[latest]
        corpus.rows = corpus.context.num_rows
        return corpus

    def counts(self):  # noqa: ANN201 - scipy.sparse.csr_matrix
        """Records x words, term counts."""
        from scipy.sparse import csr_matrix

        indptr = np.r_[0, np.cumsum(self.lengths)]
        x = csr_matrix((np.ones(len(self.term_ids), np.float32), self.term_ids, indptr),
                       shape=(self.rows, max(len(self.words), 1)))
        x.sum_duplicates()
        return x

    def vocabulary(self, min_df: int, max_df: float, max_terms: int) -> tuple[np.ndarray, np.ndarray]:
        """Word ids of the vocabulary (most frequent first, ties by word) and their idf."""
        x = self.counts()
        df = np.bincount(x.indices, minlength=x.shape[1])
        ok = np.flatnonzero((df >= min_df) & (df <= max_df * max(self.rows, 1)))
        order = ok[np.lexsort((self.words[ok].astype(str), -df[ok]))][:max_terms] if len(ok) else ok
        idf = np.log((1 + self.rows) / (1 + df[order])) + 1
        return order, idf

    def tfidf(self, vocab: np.ndarray, idf: np.ndarray):  # noqa: ANN201 - scipy.sparse.csr_matrix
        """Records x vocabulary: sublinear tf x idf, rows of unit length (``TfidfTransformer``'s rules)."""
        from scipy.sparse import diags
        from sklearn.preprocessing import normalize

        if not len(vocab):
            from scipy.sparse import csr_matrix

            return csr_matrix((self.rows, 0))
        x = self.counts()[:, vocab].tocsr()
        x.data = 1 + np.log(x.data.astype(np.float64))
        return normalize((x @ diags(np.asarray(idf, np.float64))).tocsr(), norm="l2", copy=False)

    def top_forms(self) -> dict[str, str]:
        """The surface form seen most for each stem (ties: the first in sort order)."""
        best: dict[str, tuple[int, str]] = {}
        for (stem, form), count in self.forms.items():
            have = best.get(stem)
            if have is None or count > have[0] or (count == have[0] and form < have[1]):
                best[stem] = (count, form)
        return {stem: form for stem, (_, form) in best.items()}


def _latest(keys: pa.ChunkedArray) -> np.ndarray:
    """Mask of each key's last row (parts are read in collection order, so the last is the latest)."""
    n = len(keys)
    if pc.count_distinct(keys).as_py() == n:
        return np.ones(n, bool)
    codes = pc.dictionary_encode(keys.combine_chunks()).indices.to_numpy()
    last = n - 1 - np.unique(codes[::-1], return_index=True)[1]
    mask = np.zeros(n, bool)
    mask[last] = True
    return mask


class _Model:
    """A fitted topic model: vocabulary words, their idf, the components (topics x words) and the topic id of
    each component."""

    def __init__(self, words: np.ndarray, idf: np.ndarray, components: np.ndarray, topic_ids: list[int],
                 fitted_at: datetime, fitted_records: int) -> None:
        self.words, self.idf, self.components = words, idf, components
        self.topic_ids, self.fitted_at, self.fitted_records = topic_ids, fitted_at, fitted_records

    def top_stems(self, n: int) -> list[list[str]]:
        out = []
        for weights in self.components:
            top = np.argsort(-weights, kind="stable")[:n]
            out.append([str(self.words[i]) for i in top if weights[i] > 0])
        return out

    def project(self, corpus: _Corpus, max_iter: int) -> np.ndarray:
        """Each record's (unscaled) topic weights: NMF ``transform`` with these components, in chunks."""
        from sklearn.decomposition import non_negative_factorization

        index = {w: i for i, w in enumerate(corpus.words.tolist())}
        vocab = np.array([index.get(w, -1) for w in self.words.tolist()], np.int64)
        present = vocab >= 0
        x = corpus.tfidf(vocab[present], self.idf[present])
        h = self.components[:, present].astype(np.float64)
        out = np.zeros((corpus.rows, len(self.components)), np.float32)
        for start in range(0, corpus.rows, TRANSFORM_CHUNK):
            chunk = x[start:start + TRANSFORM_CHUNK]
            if chunk.nnz == 0:
                continue
            w, _, _ = non_negative_factorization(chunk, H=h, n_components=h.shape[0], update_H=False, solver="cd", max_iter=max_iter, tol=1e-4)
            out[start:start + TRANSFORM_CHUNK] = w
        return out

    def to_table(self, enricher: Topics) -> pa.Table:
        meta = {"topic_ids": list(map(int, self.topic_ids)), "fitted_at": _iso(self.fitted_at),
                "fitted_records": int(self.fitted_records)}
        weights = self.components.T if self.components.size else np.zeros((len(self.words), 0), np.float32)
        table = enricher.table(enricher.model_schema, {
            "term": pa.array(self.words.tolist(), pa.string()), "idf": pa.array(self.idf, pa.float64()),
            "weights": pa.array([row.tolist() for row in weights], pa.list_(pa.float32()))})
        return table.replace_schema_metadata({MODEL_META: orjson.dumps(meta)})

    @classmethod
    def from_table(cls, table: pa.Table) -> "_Model | None":
        meta = (table.schema.metadata or {}).get(MODEL_META)
        if meta is None:
            return None
        info = orjson.loads(meta)
        k = len(info["topic_ids"])
        weights = pc.list_flatten(table.column("weights")).to_numpy().astype(np.float32)
        components = weights.reshape(table.num_rows, k).T.copy() if k else np.zeros((0, table.num_rows), np.float32)
        fitted_at = datetime.fromisoformat(info["fitted_at"].replace("Z", "+00:00"))
        return cls(np.array(table.column("term").to_pylist(), dtype=object), table.column("idf").to_numpy(),
                   components, info["topic_ids"], fitted_at, info["fitted_records"])


def match_ids(new: list[list[str]], known: pa.Table | None, min_overlap: float,
              now: datetime) -> tuple[list[int], pa.Table]:
    """Topic ids for the new topics (their top stems) and the updated id table: a new topic takes the id of
    the known topic it overlaps most (Jaccard of top stems, one to one), when at least ``min_overlap``;
    otherwise an id never used before."""
    from scipy.optimize import linear_sum_assignment

    old_ids = known.column("topic_id").to_pylist() if known is not None else []
    old_terms = known.column("terms").to_pylist() if known is not None else []
    first = known.column("first_fitted").to_pylist() if known is not None else []
    last = known.column("last_fitted").to_pylist() if known is not None else []
    ids: list[int | None] = [None] * len(new)
    if new and old_ids:
        overlap = np.array([[_jaccard(a, b) for b in old_terms] for a in new])
        rows, cols = linear_sum_assignment(-overlap)
        for r, c in zip(rows.tolist(), cols.tolist()):
            if overlap[r, c] >= min_overlap:
                ids[r] = old_ids[c]
    next_id = max(old_ids, default=0) + 1
    position = {topic: i for i, topic in enumerate(old_ids)}
    for i, topic in enumerate(ids):
        if topic is None:
            ids[i] = topic = next_id
            next_id += 1
            old_ids.append(topic), old_terms.append(new[i]), first.append(now), last.append(now)
        else:
            old_terms[position[topic]], last[position[topic]] = new[i], now
    return [int(t) for t in ids if t is not None], _registry_table(old_ids, old_terms, first, last)


def _registry_table(ids: list[int], terms: list[list[str]], first: list[Any], last: list[Any]) -> pa.Table:
    return pa.table({"topic_id": pa.array(ids, pa.int32()), "terms": pa.array(terms, pa.list_(pa.string())),
                     "first_fitted": pa.array(first, _TS), "last_fitted": pa.array(last, _TS)})


def _jaccard(a: list[str], b: list[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa or sb else 0.0
