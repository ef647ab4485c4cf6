"""Near-duplicate clusters: texts repeated or lightly edited, across accounts, sources and platforms of a tenant.

Per record (``extract``, incremental): the text is normalized (``text_clean`` casefolded; links, @handles and
punctuation dropped), cut into word unigrams and bigrams, and summarized by a MinHash signature
(``datasketch``, ``num_perm`` permutations; shingles hashed with CRC-32 so signatures are stable across
processes). Reposts (retweets, forwards) are left out: they are shares, not copies. Texts with fewer than
``min_words`` words are left out: too short for similarity to mean anything.

Per tenant (``combine``): identical signatures are grouped, the distinct ones banded as ``MinHashLSH`` chooses
for ``threshold`` (weighted towards recall) and bucketed by band, each candidate pair (a shared bucket)
checked with the signatures' estimated Jaccard similarity (kept when >= ``threshold``), and connected pairs form clusters. A cluster lists its members, the
accounts involved, first and last seen, platforms and sources; each member carries its estimated similarity
to the cluster's first record, so a cluster can be read and judged.

**Caution.** Textual similarity is not evidence of coordination. Copy-pasted slogans, quotes, news
headlines, song lyrics, templates ("happy birthday ..."), bots of one service and people independently
sharing one text all make clusters. A cluster is a place to look, never a verdict about the accounts in it.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import zlib
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from crawl_assets.enrich.base import STAMP_NAMES, CombineContext, Enricher, feature_document
from crawl_assets.enrich.columns import CONTEXT_COLUMNS, CONTEXT_FIELDS, _iso, context, positions
from crawl_assets.enrich import signatures
from crawl_assets.enrich.signatures import distinct_rows, latest_signatures, row_hash

_TS = pa.timestamp("us", tz="UTC")
_LINK = re.compile(r"https?://\S+|www\.\S+|[@#][\w\u200c]+")
LSH_WEIGHTS = (0.1, 0.9)  # (false positive, false negative) weights of datasketch's banding choice
DOC_LIST_CAP = 1000  # members/accounts listed in one index document (the Parquet tables list them all)


_WORD = re.compile(r"[\w\u200c]+")  # a word: a run of word characters (punctuation and spaces cut)


def shingles(text: str) -> list[bytes]:
    """Word unigrams and bigrams of the normalized text, as bytes (an empty list for an empty text)."""
    return _shingles(text)[0]


def _shingles(text: str) -> tuple[list[bytes], int]:
    """``shingles(text)`` and the number of distinct words (the unigrams among them). The text is encoded
    once and cut into words as bytes (words hold no space, so a bigram's bytes are its words' joined)."""
    words = " ".join(_WORD.findall(_LINK.sub(" ", text.casefold()))).encode().split()
    unigrams = set(words)
    return [*unigrams, *{*map(b" ".join, zip(words, words[1:]))}], len(unigrams)


_FMIX32 = (16, np.uint32(0x85EBCA6B), 13, np.uint32(0xC2B2AE35), 16)  # MurmurHash3's 32-bit finalizer
_SIGNATURE_BATCH = 1000  # texts per vectorized step (bounds the permutations x shingles array)


def minhash_signatures(texts: list[list[bytes]], num_perm: int, seed: int) -> np.ndarray:
    """The MinHash signature of each text's shingles (each text holds at least one), one row per text: what
    ``datasketch.MinHash(num_perm, seed, hashfunc=zlib.crc32).update_batch(shingles).hashvalues`` gives
    (scheme ``affine32``: CRC-32, MurmurHash3's finalizer, then datasketch's permutations), computed for a
    batch of texts at once instead of one MinHash object per text (a test holds them equal). The permuted
    hashes are laid out permutation-major, so each minimum runs over a contiguous run of one text's shingles
    (5x faster than shingle-major)."""
    from datasketch import MinHash  # (with scipy: loaded only when signatures are computed)

    template = MinHash(num_perm=num_perm, seed=seed, hashfunc=zlib.crc32, scheme="affine32")
    a, b = (np.asarray(p, dtype=np.uint32) for p in template.permutations)
    out = np.empty((len(texts), num_perm), dtype=np.uint32)
    s1, m1, s2, m2, s3 = _FMIX32
    for start in range(0, len(texts), _SIGNATURE_BATCH):
        batch = texts[start:start + _SIGNATURE_BATCH]
        sizes = np.fromiter(map(len, batch), dtype=np.int64, count=len(batch))
        hv = np.fromiter(map(zlib.crc32, itertools.chain.from_iterable(batch)), dtype=np.uint32,
                         count=int(sizes.sum()))
        with np.errstate(over="ignore"):
            hv ^= hv >> s1
            hv *= m1
            hv ^= hv >> s2
            hv *= m2
            hv ^= hv >> s3
            permuted = np.multiply.outer(a, hv)  # (num_perm, shingles)
            permuted += b[:, None]
        offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        out[start:start + len(batch)] = np.minimum.reduceat(permuted, offsets, axis=1).T
    return out


class NearDuplicates(Enricher):
    name: ClassVar[str] = "near_duplicates"
    version: ClassVar[str] = "1"
    scope: ClassVar[str] = "tenant"  # type: ignore[assignment]
    columns: ClassVar[tuple[str, ...]] = (*CONTEXT_COLUMNS, "kind", "text_clean")
    tables: ClassVar[tuple[str, ...]] = ("clusters", "members")
    description: ClassVar[str] = "Clusters of repeated or lightly edited texts (MinHash/LSH) with members, " \
                                 "accounts, first and last seen. Similarity is not evidence of coordination."

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {"num_perm": 64, "threshold": 0.6, "min_words": 6, "seed": 1}

    def validate(self) -> None:
        p = self.params
        if not (isinstance(p["num_perm"], int) and 16 <= p["num_perm"] <= 512):
            raise ValueError("near_duplicates: 'num_perm' must be an integer from 16 to 512")
        if not (isinstance(p["threshold"], (int, float)) and 0.3 <= p["threshold"] <= 1.0):
            raise ValueError("near_duplicates: 'threshold' must be a number from 0.3 to 1.0")
        if not (isinstance(p["min_words"], int) and p["min_words"] >= 1):
            raise ValueError("near_duplicates: 'min_words' must be a positive integer")
        if p["threshold"] <= 0.95:
            return  # every num_perm from 16 to 512 gets two bands or more (checked); datasketch loads later
        from datasketch import MinHashLSH

        try:  # the banding must exist (at 1.0, or 0.99 below 512 permutations, it leaves one band)
            MinHashLSH(threshold=p["threshold"], num_perm=p["num_perm"], weights=LSH_WEIGHTS)
        except ValueError as exc:
            raise ValueError(f"near_duplicates: 'threshold' {p['threshold']} with 'num_perm' {p['num_perm']} leaves "
                             f"too few LSH bands ({exc}); lower the threshold or raise num_perm") from exc

    @property
    def part_schema(self) -> pa.Schema:
        return self.stamped_schema([*CONTEXT_FIELDS, pa.field("signature", pa.list_(pa.uint32(), self.params["num_perm"]))])

    # -- per part ---------------------------------------------------------------------------------------
    def extract(self, records: pa.Table) -> pa.Table:
        kinds = records.column("kind").to_pylist()
        texts = records.column("text_clean").to_pylist()
        # every record gets a row (a left-out one a null signature), so that a later observation of a key
        # that no longer qualifies replaces the earlier one's signature
        which = np.full(len(texts), -1, dtype=np.int64)  # position of the row's text in ``distinct``, or -1
        distinct: list[list[bytes]] = []
        seen: dict[str, int] = {}
        for i, (kind, text) in enumerate(zip(kinds, texts)):
            if kind == "repost" or not text:
                continue
            d = seen.get(text)
            if d is None:
                grams, words = _shingles(text)
                d = seen[text] = len(distinct) if words >= self.params["min_words"] else -1
                if d >= 0:
                    distinct.append(grams)
            which[i] = d
        num_perm = self.params["num_perm"]
        hashed = np.zeros((len(distinct) + 1, num_perm), dtype=np.uint32)  # the last row: left-out records
        hashed[:len(distinct)] = minhash_signatures(distinct, num_perm, self.params["seed"])
        flat = pa.array(hashed[which].reshape(-1), pa.uint32())
        signature = pa.FixedSizeListArray.from_arrays(flat, num_perm, mask=pa.array(which < 0))
        return self.table(self.part_schema, {**context(records), "signature": signature})

    # -- per tenant -------------------------------------------------------------------------------------
    def combine(self, rows: Iterable[pa.Table], context: CombineContext) -> dict[str, pa.Table]:
        table, sigs, signed = latest_signatures(rows, self.params["num_perm"], [f.name for f in CONTEXT_FIELDS])
        if not table.num_rows:
            return self._empty()
        meta = table.take(pa.array(signed, pa.int64()))
        del table
        groups, distinct, inverse = self.cluster(sigs)
        del sigs  # (its memory now holds ``distinct``)
        return self._tables(meta, distinct, inverse, groups, context)

    def _cluster(self, sigs: np.ndarray) -> list[list[int]]:
        """Row groups of similar signatures (each group >= 2 rows); ``sigs`` is overwritten (``cluster``)."""
        return self.cluster(sigs)[0]

    def cluster(self, sigs: np.ndarray) -> tuple[list[list[int]], np.ndarray, np.ndarray]:
        """Row groups of similar signatures (each group >= 2 rows), by LSH candidates checked exactly, with the
        distinct signatures and each row's among them. The distinct rows are gathered into ``sigs``'s own
        memory (the caller's array is overwritten): memory is one copy of the signatures, not three."""
        from datasketch import MinHashLSH

        distinct, inverse = distinct_rows(sigs)
        threshold, num_perm = self.params["threshold"], self.params["num_perm"]
        # banding that favours recall (a missed pair is lost; a false candidate only costs one exact check):
        # at 64 permutations and 0.6, datasketch chooses 16 bands of 4, which find 89% of pairs at exactly
        # 0.6 and 99% at 0.7. The buckets are formed with numpy (rows with equal band values), not by
        # MinHashLSH's insert and query, which cost 5x more in Python per signature and band. Clusters are
        # the connected components of the candidate pairs that pass the exact check: every pair of every
        # bucket up to LARGE_BUCKET rows, deduplicated over the bands and checked at once (up to PAIR_CHUNK
        # pairs at a time); larger buckets (rare: a template) member by member, skipping members joined.
        lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=LSH_WEIGHTS)
        need = threshold * num_perm
        n = len(distinct)
        if n < 2:  # one distinct signature (or none): its rows, if several, are one cluster
            return _groups(np.zeros(len(inverse), np.int64)), distinct, inverse
        labels, edges, pending, large = np.arange(n), [], [], []
        for band in range(lsh.b):
            buckets, big = _band_buckets(distinct[:, band * lsh.r:(band + 1) * lsh.r])
            large += big
            for pairs in _bucket_pairs(*buckets, limit=PAIR_CHUNK // 4):  # bounded: checked PAIR_CHUNK at a time
                pending.append(pairs)
                if sum(map(len, pending)) >= PAIR_CHUNK:
                    edges.append(_similar(distinct, np.concatenate(pending), need))
                    pending = []
                if sum(map(len, edges)) >= PAIR_CHUNK:  # the pairs found so far, kept as a forest
                    labels, edges = _joined(labels, np.concatenate(edges)), []
        if pending:
            edges.append(_similar(distinct, np.concatenate(pending), need))
        if edges:
            labels = _joined(labels, np.concatenate(edges))
        if large:
            labels = _join_large_buckets(distinct, labels, large, need)
        return _groups(labels[inverse]), distinct, inverse

    def _tables(self, meta: pa.Table, distinct: np.ndarray, inverse: np.ndarray, clusters: list[list[int]],
                ctx: CombineContext) -> dict[str, pa.Table]:
        # only the clustered rows' context becomes Python objects (the tenant's other rows stay in Arrow)
        rows = np.fromiter(itertools.chain.from_iterable(clusters), np.int64)
        sub = meta.select(["key", "author_id", "platform", "source", "created_at"]).take(pa.array(rows, pa.int64()))
        keys, authors, platforms, sources, created = (sub.column(c).to_pylist() for c in sub.column_names)
        at = {int(r): i for i, r in enumerate(rows.tolist())}  # meta row -> position in ``sub``
        cols: dict[str, list[Any]] = {f.name: [] for f in self.cluster_schema if f.name not in STAMP_NAMES}
        member_rows: list[int] = []
        member_cluster: list[str] = []
        firsts: list[int] = []
        for group in clusters:
            group.sort(key=lambda r: (created[at[r]] is None, created[at[r]], keys[at[r]]))
            first = at[group[0]]
            cid = "nd-" + hashlib.blake2b(keys[first].encode(), digest_size=8).hexdigest()
            times = [created[at[r]] for r in group if created[at[r]] is not None]
            accounts = sorted({a for a in (authors[at[r]] for r in group) if a})
            for name, value in (("cluster_id", cid), ("first_key", keys[first]), ("member_count", len(group)),
                                ("account_count", len(accounts)), ("accounts", accounts),
                                ("platforms", sorted({platforms[at[r]] for r in group})),
                                ("sources", sorted({sources[at[r]] for r in group})),
                                ("first_seen", min(times) if times else None),
                                ("last_seen", max(times) if times else None),
                                ("min_similarity", None), ("generated_at", ctx.generated_at)):
                cols[name].append(value)
            member_rows += group
            member_cluster += [cid] * len(group)
            firsts += [group[0]] * len(group)
        similarity = signatures.agreement(distinct, inverse[np.asarray(member_rows, np.int64)],
                                inverse[np.asarray(firsts, np.int64)])
        bounds = np.cumsum([0] + [len(g) for g in clusters])
        cols["min_similarity"] = [float(similarity[a:b].min()) for a, b in zip(bounds[:-1], bounds[1:])]
        members = {**{f.name: meta.column(f.name).take(positions(member_rows)) for f in CONTEXT_FIELDS},
                   "cluster_id": member_cluster, "similarity": similarity.astype(np.float32),
                   "generated_at": [ctx.generated_at] * len(member_rows)}
        return {"clusters": self.table(self.cluster_schema, cols), "members": self.table(self.member_schema, members)}

    def _empty(self) -> dict[str, pa.Table]:
        return {"clusters": self.cluster_schema.empty_table(), "members": self.member_schema.empty_table()}

    @property
    def cluster_schema(self) -> pa.Schema:
        strings = pa.list_(pa.string())
        return self.stamped_schema([
            pa.field("cluster_id", pa.string()), pa.field("first_key", pa.string()),
            pa.field("member_count", pa.int32()), pa.field("account_count", pa.int32()),
            pa.field("accounts", strings), pa.field("platforms", strings), pa.field("sources", strings),
            pa.field("first_seen", _TS), pa.field("last_seen", _TS), pa.field("min_similarity", pa.float32()),
            pa.field("generated_at", _TS)])

    @property
    def member_schema(self) -> pa.Schema:
        return self.stamped_schema([*CONTEXT_FIELDS, pa.field("cluster_id", pa.string()),
                                    pa.field("similarity", pa.float32()), pa.field("generated_at", _TS)])

    # -- index ------------------------------------------------------------------------------------------
    def documents(self, table: str, rows: pa.Table, context: CombineContext | None) -> Iterator[dict[str, Any]]:
        assert context is not None
        updated = _iso(context.generated_at)
        if table == "clusters":
            for row in rows.to_pylist():
                info = {k: row[k] for k in ("cluster_id", "first_key", "member_count", "account_count",
                                            "platforms", "sources")}
                info["min_similarity"] = round(row["min_similarity"], 4)
                info.update(accounts=row["accounts"][:DOC_LIST_CAP], first_seen=_iso(row["first_seen"]),
                            last_seen=_iso(row["last_seen"]))
                yield feature_document(self, f"cluster:{row['cluster_id']}", "cluster", tenant=context.tenant,
                                       created_at=_iso(row["first_seen"]), updated_at=updated, near_duplicates=info)
        elif table == "members":
            for row in rows.to_pylist():
                yield feature_document(self, row["key"], "record", tenant=row["tenant"], record_key=row["key"],
                                       platform=row["platform"], source=row["source"], author_id=row["author_id"],
                                       created_at=_iso(row["created_at"]), updated_at=updated,
                                       near_duplicates={"cluster_id": row["cluster_id"],
                                                        "similarity": round(row["similarity"], 4)})


LARGE_BUCKET = 256  # rows of a bucket above which its pairs are checked member by member


def _band_buckets(band: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], list[np.ndarray]]:
    """Buckets of one band: rows with the same band key (a 64-bit mix of the band's values; a collision only
    adds a candidate, which the exact check drops). Those of two to LARGE_BUCKET rows as (row order, starts,
    sizes) for ``_bucket_pairs``, and the row numbers (ascending) of each larger bucket."""
    rows = len(band)
    key = row_hash(band)
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, rows])
    big = (sizes > LARGE_BUCKET)
    large = [np.sort(order[a:a + z]) for a, z in zip(starts[big].tolist(), sizes[big].tolist())]
    small = (sizes > 1) & ~big
    return (order, starts[small], sizes[small]), large


def _bucket_pairs(order: np.ndarray, starts: np.ndarray, sizes: np.ndarray, limit: int) -> Iterator[np.ndarray]:
    """The pairs ``i * rows + j`` (i < j) of every bucket, about ``limit`` at a time (whole buckets)."""
    rows = len(order)
    counts = sizes * (sizes - 1) // 2
    cut = np.searchsorted(np.cumsum(counts), np.arange(limit, int(counts.sum()) + limit, limit), side="right")
    done = 0  # buckets already handed out (a bucket larger than the limit spans several cuts: once only)
    for lo, hi in zip(np.r_[0, cut[:-1]], cut):
        lo = max(int(lo), done)
        if lo == hi and lo < len(sizes):
            hi = lo + 1  # (a single bucket larger than the limit)
        if lo >= hi:
            continue
        done = int(hi)
        start, size = starts[lo:hi], sizes[lo:hi]
        # every element of a bucket, paired with each element after it in the bucket
        member = np.repeat(start, size) + (np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size))
        later = np.repeat(start + size, size) - member - 1  # elements after it in its bucket
        first = np.repeat(member, later)
        second = first + 1 + (np.arange(int(later.sum())) - np.repeat(np.cumsum(later) - later, later))
        i, j = order[first], order[second]
        yield np.minimum(i, j).astype(np.int64) * rows + np.maximum(i, j)


def _joined(labels: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Component labels after joining ``edges`` (``i * rows + j``) to the components ``labels`` hold: each row
    is linked to its component's first row, so the pairs found so far are held as at most one link per row."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(labels)
    _, first = np.unique(labels, return_index=True)  # (labels are 0..k-1, as connected_components numbers them)
    left, right = np.divmod(edges, n)
    left, right = np.r_[left, np.arange(n)], np.r_[right, first[labels]]
    graph = coo_matrix((np.ones(len(left), np.int8), (left, right)), shape=(n, n))
    return connected_components(graph, directed=False)[1]


PAIR_CHUNK = 1_000_000  # candidate pairs held at once (8 MB): beyond it they are checked and dropped


def _similar(sigs: np.ndarray, pairs: np.ndarray, need: float) -> np.ndarray:
    """The distinct ``pairs`` (``i * rows + j``) whose signatures agree in at least ``need`` positions."""
    pairs = np.sort(pairs)
    pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]] if len(pairs) else pairs
    keep = [signatures.agreeing(sigs, *np.divmod(chunk, len(sigs))) >= need
            for chunk in (pairs[i:i + signatures.ROW_CHUNK] for i in range(0, len(pairs), signatures.ROW_CHUNK))]
    return pairs[np.concatenate(keep)] if keep else pairs


def _join_large_buckets(sigs: np.ndarray, labels: np.ndarray, buckets: list[np.ndarray], need: float) -> np.ndarray:
    """The components after also joining the similar pairs of the large buckets (union-find over labels)."""
    parent = list(range(int(labels.max()) + 1))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for members in buckets:
        if len({find(int(labels[i])) for i in members.tolist()}) == 1:
            continue  # already one cluster
        for pos, i in enumerate(members[:-1].tolist()):
            later = members[pos + 1:]
            for j in later[np.count_nonzero(sigs[later] == sigs[i], axis=1) >= need].tolist():
                parent[find(int(labels[j]))] = find(int(labels[i]))
    return np.array([find(int(x)) for x in labels], dtype=np.int64)


def _groups(labels: np.ndarray) -> list[list[int]]:
    """Rows by label, for labels of two or more rows; each group ascending, groups by their first row."""
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, len(ordered)])
    groups = [order[a:a + z].tolist() for a, z in zip(starts[sizes > 1].tolist(), sizes[sizes > 1].tolist())]
    return sorted(groups, key=lambda g: g[0])
