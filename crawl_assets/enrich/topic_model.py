"""The topic model's pieces for ``topics.py``: the tenant's corpus as term ids (TF-IDF by scikit-learn's
``TfidfTransformer`` rules), a fitted NMF model kept as a Parquet table, and the matching of new topics to
known topic ids by the overlap of their top stems."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.enrich.columns import CONTEXT_FIELDS, _iso, last_rows

TS = pa.timestamp("us", tz="UTC")
RECORD, FORM = "record", "form"
MODEL_META = b"crawl_assets.topics_model"
TRANSFORM_CHUNK = 20_000  # records projected at once


class _Tables(Protocol):
    model_schema: pa.Schema

    def table(self, schema: pa.Schema, columns: dict[str, Any]) -> pa.Table: ...


class Corpus:
    """The tenant's records (latest observation of each key) as term ids, with their context and the
    (stem, form) counts of the parts."""

    def __init__(self) -> None:
        self.words = np.array([], dtype=object)
        self.rows = 0

    @classmethod
    def read(cls, parts: Iterable[pa.Table]) -> "Corpus":
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
            local = np.empty(len(encoded.dictionary), np.int32)  # word ids (int32: half the corpus's memory)
            for j, word in enumerate(encoded.dictionary.to_pylist()):
                at = index.get(word)
                if at is None:
                    at = index[word] = len(words)
                    words.append(word)
                local[j] = at
            ids.append(local[encoded.indices.to_numpy()] if len(encoded.indices) else np.zeros(0, np.int32))
            offsets.append(np.diff(lists.offsets.to_numpy()))
            contexts.append(mine.select([f.name for f in CONTEXT_FIELDS]))
            reposts.append(np.asarray(pc.fill_null(mine.column("repost"), False).to_numpy(zero_copy_only=False), bool))
        corpus = cls()
        corpus.words = np.array(words, dtype=object)
        corpus.forms = forms
        if not contexts:
            corpus.context = pa.table({f.name: pa.array([], f.type) for f in CONTEXT_FIELDS})
            corpus.term_ids, corpus.lengths, corpus.repost = np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, bool)
            return corpus
        pa.default_memory_pool().release_unused()  # the parts' buffers: memory follows the corpus, not the reads
        table = pa.concat_tables(contexts)
        lengths = np.concatenate(offsets)
        term_ids = np.concatenate(ids)
        del ids
        repost = np.concatenate(reposts)
        latest = last_rows(table.column("key"))  # a key in several parts: its latest part's row
        if not latest.all():
            term_ids, lengths, repost = term_ids[np.repeat(latest, lengths)], lengths[latest], repost[latest]
            table = table.filter(pa.array(latest))
        corpus.context = table  # (chunked as read: combining the chunks would copy it)
        corpus.term_ids, corpus.lengths, corpus.repost = term_ids, lengths, repost
        corpus.rows = corpus.context.num_rows
        return corpus

    def counts(self, start: int = 0, stop: int | None = None):  # noqa: ANN201 - scipy.sparse.csr_matrix
        """Records [start, stop) x words, term counts."""
        from scipy.sparse import csr_matrix

        stop = self.rows if stop is None else min(stop, self.rows)
        indptr = np.r_[0, np.cumsum(self.lengths[start:stop])]
        first = int(self.lengths[:start].sum())
        x = csr_matrix((np.ones(int(indptr[-1]), np.float32), self.term_ids[first:first + int(indptr[-1])].copy(), indptr),
                       shape=(stop - start, max(len(self.words), 1)))
        x.sum_duplicates()  # (in place: hence the copy of the ids above)
        return x

    def vocabulary(self, min_df: int, max_df: float, max_terms: int) -> tuple[np.ndarray, np.ndarray]:
        """Word ids of the vocabulary (most frequent first, ties by word) and their idf."""
        df = np.zeros(max(len(self.words), 1), np.int64)  # records holding each word, chunk by chunk
        for start in range(0, self.rows, TRANSFORM_CHUNK):
            df += np.bincount(self.counts(start, start + TRANSFORM_CHUNK).indices, minlength=len(df))
        ok = np.flatnonzero((df >= min_df) & (df <= max_df * max(self.rows, 1)))
        order = ok[np.lexsort((self.words[ok].astype(str), -df[ok]))][:max_terms] if len(ok) else ok
        idf = np.log((1 + self.rows) / (1 + df[order])) + 1
        return order, idf

    def tfidf(self, vocab: np.ndarray, idf: np.ndarray, start: int = 0,  # noqa: ANN201 - scipy.sparse.csr_matrix
              stop: int | None = None):
        """Records [start, stop) x vocabulary: sublinear tf x idf, rows of unit length (``TfidfTransformer``'s
        rules; each row on its own, so a slice of records gives the same rows)."""
        from scipy.sparse import diags
        from sklearn.preprocessing import normalize

        if not len(vocab):
            from scipy.sparse import csr_matrix

            return csr_matrix(((self.rows if stop is None else min(stop, self.rows)) - start, 0))
        x = self.counts(start, stop)[:, vocab].tocsr()
        x.data = 1 + np.log(x.data.astype(np.float64))
        return normalize((x @ diags(np.asarray(idf, np.float64))).tocsr(), norm="l2", copy=False)

    def distinct_terms(self, vocab: np.ndarray) -> np.ndarray:
        """Per record, how many distinct vocabulary words it holds (chunk by chunk)."""
        return np.concatenate([np.diff(self.counts(start, start + TRANSFORM_CHUNK)[:, vocab].tocsr().indptr)
                               for start in range(0, self.rows, TRANSFORM_CHUNK)] or [np.zeros(0, np.int64)])

    def tfidf_rows(self, vocab: np.ndarray, idf: np.ndarray, rows: np.ndarray):  # noqa: ANN201 - csr_matrix
        """``tfidf`` of the records ``rows`` (sorted), built chunk by chunk: the whole matrix is never held."""
        from scipy.sparse import vstack

        bounds = np.searchsorted(rows, np.arange(0, self.rows + TRANSFORM_CHUNK, TRANSFORM_CHUNK))
        return vstack([self.tfidf(vocab, idf, start, start + TRANSFORM_CHUNK)[rows[lo:hi] - start]
                       for start, lo, hi in zip(range(0, self.rows, TRANSFORM_CHUNK), bounds, bounds[1:])],
                      format="csr")

    def top_forms(self) -> dict[str, str]:
        """The surface form seen most for each stem (ties: the first in sort order)."""
        best: dict[str, tuple[int, str]] = {}
        for (stem, form), count in self.forms.items():
            have = best.get(stem)
            if have is None or count > have[0] or (count == have[0] and form < have[1]):
                best[stem] = (count, form)
        return {stem: form for stem, (_, form) in best.items()}


class Model:
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

    def project(self, corpus: Corpus, max_iter: int) -> np.ndarray:
        """Each record's (unscaled) topic weights: NMF ``transform`` with these components, in chunks."""
        from sklearn.decomposition import non_negative_factorization

        index = {w: i for i, w in enumerate(corpus.words.tolist())}
        vocab = np.array([index.get(w, -1) for w in self.words.tolist()], np.int64)
        present = vocab >= 0
        h = self.components[:, present].astype(np.float64)
        out = np.zeros((corpus.rows, len(self.components)), np.float32)
        for start in range(0, corpus.rows, TRANSFORM_CHUNK):  # the matrix too, chunk by chunk
            chunk = corpus.tfidf(vocab[present], self.idf[present], start, start + TRANSFORM_CHUNK)
            if chunk.nnz == 0:
                continue
            w, _, _ = non_negative_factorization(chunk, H=h, n_components=h.shape[0], update_H=False, solver="cd", max_iter=max_iter, tol=1e-4)
            out[start:start + TRANSFORM_CHUNK] = w
        return out

    def to_table(self, enricher: _Tables) -> pa.Table:
        meta = {"topic_ids": list(map(int, self.topic_ids)), "fitted_at": _iso(self.fitted_at),
                "fitted_records": int(self.fitted_records)}
        weights = self.components.T if self.components.size else np.zeros((len(self.words), 0), np.float32)
        table = enricher.table(enricher.model_schema, {
            "term": pa.array(self.words.tolist(), pa.string()), "idf": pa.array(self.idf, pa.float64()),
            "weights": pa.array([row.tolist() for row in weights], pa.list_(pa.float32()))})
        return table.replace_schema_metadata({MODEL_META: orjson.dumps(meta)})

    @classmethod
    def from_table(cls, table: pa.Table) -> "Model | None":
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
    return [int(t) for t in ids if t is not None], registry_table(old_ids, old_terms, first, last)


def registry_table(ids: list[int], terms: list[list[str]], first: list[Any], last: list[Any]) -> pa.Table:
    return pa.table({"topic_id": pa.array(ids, pa.int32()), "terms": pa.array(terms, pa.list_(pa.string())),
                     "first_fitted": pa.array(first, TS), "last_fitted": pa.array(last, TS)})


def _jaccard(a: list[str], b: list[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa or sb else 0.0
