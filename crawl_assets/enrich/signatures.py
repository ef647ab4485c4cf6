"""MinHash signatures held compactly for the tenant-wide combines (near_duplicates, coordination): read part by
part into one uint32 matrix of the latest rows, deduplicated in place (no sorted copies), compared in chunks.
Memory is about one copy of the signatures (num_perm x 4 bytes per record) plus a few integers per record."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.enrich.columns import last_rows

_MIX = np.uint64(0x9E3779B97F4A7C15)
ROW_CHUNK = 100_000  # signature rows copied at once (25 MB at 64 permutations) when comparing or moving rows


def agreement(sigs: np.ndarray, rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    """The share of positions where ``sigs[rows]`` and ``sigs[others]`` agree (pairwise, in chunks)."""
    out = np.empty(len(rows), np.float64)
    for a in range(0, len(rows), ROW_CHUNK):
        b = a + ROW_CHUNK
        out[a:b] = agreeing(sigs, rows[a:b], others[a:b]) / sigs.shape[1]
    return out


_BYTES = np.uint64(0x0101010101010101)


def agreeing(sigs: np.ndarray, rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    """How many positions ``sigs[rows]`` and ``sigs[others]`` agree in, pairwise. With a multiple of 8
    positions (up to 248) the equal flags are summed as bytes of 64-bit words, then the bytes of each sum
    added by one multiplication: 1.7x ``count_nonzero(axis=1)``, the same counts."""
    equal = np.equal(sigs[rows], sigs[others])
    width = equal.shape[1]
    if width % 8 or width > 248 or not equal.flags.c_contiguous:
        return np.count_nonzero(equal, axis=1)
    lanes = np.add.reduce(equal.view(np.uint64), axis=1, dtype=np.uint64)
    return ((lanes * _BYTES) >> np.uint64(56)).astype(np.int64)


def row_hash(sigs: np.ndarray) -> np.ndarray:
    """A 64-bit mix of each row's values (equal rows, equal hashes), column by column: no widened copy."""
    key = np.zeros(len(sigs), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for c in range(sigs.shape[1]):
            key = (key ^ sigs[:, c].astype(np.uint64)) * _MIX
            key ^= key >> np.uint64(29)
    return key


def distinct_rows(sigs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``sigs`` (in order of first appearance) and each row's position among them, as
    ``np.unique(axis=0)`` gives up to the order of the distinct rows, without its sorted copies: rows are
    grouped by a 64-bit hash, every row checked equal to its group's first, and the distinct rows moved to
    the front of ``sigs`` itself (which is overwritten). A hash shared by unequal rows (never seen; it would
    take a 64-bit collision) falls back to ``np.unique``."""
    n = len(sigs)
    if n == 0:
        return sigs, np.zeros(0, np.int64)
    h = row_hash(sigs)
    order = np.argsort(h, kind="stable")
    ordered = h[order]
    del h
    new = np.r_[True, ordered[1:] != ordered[:-1]]
    del ordered
    label = np.cumsum(new) - 1  # group of each position of ``order``
    firsts = order[new]  # each group's first row (stable sort: the smallest row of the group)
    for a in range(0, n, ROW_CHUNK):
        rows = order[a:a + ROW_CHUNK]
        if not (sigs[rows] == sigs[firsts[label[a:a + ROW_CHUNK]]]).all():
            distinct, inverse = np.unique(sigs, axis=0, return_inverse=True)
            return distinct, inverse.reshape(-1)
    rank = np.empty(len(firsts), np.int64)
    by_row = np.argsort(firsts, kind="stable")
    rank[by_row] = np.arange(len(firsts))
    inverse = np.empty(n, np.int64)
    inverse[order] = rank[label]
    return compact_rows(sigs, firsts[by_row]), inverse


def compact_rows(sigs: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``sigs[rows]`` for ascending ``rows``, moved to the front of ``sigs`` itself (overwritten): rows[i] >= i,
    so moving them forward in order never overwrites one still to be read. No second copy is held."""
    for a in range(0, len(rows), ROW_CHUNK):
        moved = rows[a:a + ROW_CHUNK]
        sigs[a:a + len(moved)] = sigs[moved]
    return sigs[:len(rows)]


def latest_signatures(rows: Iterable[pa.Table], num_perm: int,
                      columns: list[str]) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """Over feature parts read one at a time: the latest row of each key (a later row wins; ``columns``
    only), the signatures of those rows that have one as one uint32 matrix (in row order), and their
    positions in the table. Signatures are appended to one buffer as parts are read (it grows in place:
    ``realloc`` of a large block remaps pages, nothing is copied) and the rows of keys seen again later are
    dropped in place: one copy of the signatures is held, never two."""
    metas, valid_of = [], []
    buf, filled = np.empty((0, num_perm), np.uint32), 0
    for table in rows:
        column = table.column("signature").combine_chunks()
        valid = np.asarray(pc.is_valid(column).to_numpy(zero_copy_only=False), bool)
        sigs = _signatures(column.filter(pa.array(valid)), num_perm)
        buf.resize((filled + len(sigs), num_perm), refcheck=False)  # (exactly: numpy zero-fills what it adds)
        buf[filled:filled + len(sigs)] = sigs
        filled += len(sigs)
        valid_of.append(valid)
        metas.append(table.select(columns))
        del table, column, sigs
        pa.default_memory_pool().release_unused()  # the part's read buffers back to the system, part by part
    if not metas:
        return pa.table({c: pa.array([], pa.string()) for c in columns}), buf, np.zeros(0, np.int64)
    table = pa.concat_tables(metas)
    del metas
    live = last_rows(table.column("key"))
    valid = np.concatenate(valid_of)
    kept = compact_rows(buf[:filled], np.flatnonzero(live[valid]))
    buf.resize((len(kept), num_perm), refcheck=False)  # (the rows past them back to the system)
    if not live.all():
        table = table.filter(pa.array(live))
    return table, buf, np.flatnonzero(valid[live])


def _signatures(column: pa.Array, num_perm: int) -> np.ndarray:
    if len(column) == 0:
        return np.empty((0, num_perm), dtype=np.uint32)
    return pc.list_flatten(column).to_numpy(zero_copy_only=False).astype(np.uint32, copy=False).reshape(-1, num_perm)
