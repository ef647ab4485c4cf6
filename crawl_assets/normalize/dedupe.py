"""One output record per key, the latest observation winning, in bounded memory.

A retried API page or an export read twice must not produce a record twice. Holding every record to
compare them would cost ~5 KB each as pydantic models, so the first pass spills the serialized record to a
temporary file and a 40-byte rank row per record (128-bit key hash, edit time, collection time, position) to
another, in hash buckets; a sort per bucket marks one winner per key (latest ``edited_at``, then latest
``provenance.collected_at``, then the later input), and the second pass streams the winners back in input
order. Memory held is a bucket's rows and one flag byte per record, not the rank rows of every record.

Observations arrive in ``Block``s (built where the records are serialized, e.g. in a worker process:
keys already hashed, payloads already concatenated), so the process that dedupes does a few bulk
appends per block instead of Python work per record, and ``write_winners`` copies a block whose
records all win to the output in one write.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import IO, TYPE_CHECKING

from crawl_assets.schema.record import Record

if TYPE_CHECKING:  # numpy (~11 MiB) is only needed where ranks are spilled and sorted: not in workers
    import numpy as np

_HEADER = struct.Struct("<QQQ")  # records, main bytes, side bytes of one spilled block (then its key hashes)
_NEVER = float("-inf")
_blake2b = hashlib.blake2b
_PENDING_BYTES = 1 << 20  # single adds are gathered into blocks of about this size before spilling


def key_hashes(keys: list[str]) -> bytes:
    """The 128-bit hashes keys are deduplicated by, concatenated (any string, lone surrogates included)."""
    return b"".join([_blake2b(k.encode("utf-8", "surrogatepass"), digest_size=16).digest() for k in keys])


def key_hash(key: str) -> int:
    """A record key as a 64-bit number, for tallies of many keys held as arrays (8 bytes a key, not a Python
    string each): the pipeline's ``KeyTally``, the relation tables, a release's counts. Any string."""
    return int.from_bytes(_blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


@dataclass(slots=True, frozen=True)
class Block:
    """Observations added together: per observation a key hash, two times and two payloads.

    ``main`` payloads come back from ``Deduper.winners``; ``write_winners`` writes the winners' ``main``
    and ``side`` payloads to two outputs (the CLI: record lines and edge lines). Plain bytes and arrays,
    so a block pickles as a few buffers when it crosses a process boundary. Built by ``BlockBuilder``."""

    hashes: bytes | bytearray
    edited: array
    collected: array
    main: bytes | bytearray
    main_ends: array
    side: bytes | bytearray
    side_ends: array
    unavailable: int = 0  # observations that a post is gone or hidden (X errors, deletion lines), for summaries
    histories: tuple[list[str], ...] = ()  # edit histories seen (``output.EditHistories``), joined after the run

    def __len__(self) -> int:
        return len(self.edited)


class BlockBuilder:
    """Gathers observations for one ``Block``. Payloads go straight into two growing buffers (``main`` and
    ``side``): a serializer can write into them in place (``msgspec``'s ``encode_into``), then ``commit``."""

    def __init__(self) -> None:
        self._keys: list[str] = []  # hashed together in ``build``
        self._edited = array("d")
        self._collected = array("d")
        self.main = bytearray()
        self._main_ends = array("Q")
        self.side = bytearray()
        self._side_ends = array("Q")
        self.unavailable = 0
        self.histories: list[list[str]] = []

    def add(self, key: str, edited: float, collected: float, main: bytes, side: bytes = b"") -> None:
        """One observation; times are epoch seconds, -inf when unknown."""
        self.main += main
        self.side += side
        self.commit(key, edited, collected)

    def commit(self, key: str, edited: float, collected: float) -> None:
        """End an observation whose payloads were appended to ``main`` and ``side`` since the last one."""
        self._keys.append(key)
        self._edited.append(edited)
        self._collected.append(collected)
        self._main_ends.append(len(self.main))
        self._side_ends.append(len(self.side))

    def __len__(self) -> int:
        return len(self._edited)

    def build(self) -> Block:
        """The block of everything committed (the builder is not to be used afterwards)."""
        return Block(key_hashes(self._keys), self._edited, self._collected, self.main, self._main_ends, self.side,
                     self._side_ends, self.unavailable, tuple(self.histories))  # fmt: skip


class Deduper:
    """Collects (key, times, payload) then yields the winning payloads in input order."""

    def __init__(self) -> None:
        self._ranks = _RankBuckets()
        self._spill = tempfile.TemporaryFile(prefix="crawl-dedupe-")
        self._pending = BlockBuilder()
        self.total = 0
        self.unique = 0

    def add(self, key: str, edited_at: datetime | None, collected_at: datetime | None, payload: bytes) -> None:
        """Remember one observation; ``payload`` comes back from ``winners`` if it wins."""
        self.add_ranked(
            key,
            edited_at.timestamp() if edited_at is not None else _NEVER,
            collected_at.timestamp() if collected_at is not None else _NEVER,
            payload,
        )

    def add_ranked(self, key: str, edited: float, collected: float, payload: bytes) -> None:
        """``add`` with the times already as epoch seconds (-inf when unknown)."""
        self._pending.add(key, edited, collected, payload)
        if len(self._pending.main) >= _PENDING_BYTES:
            self._flush_pending()

    def add_record(self, record: Record, payload: bytes) -> None:
        """``add`` with the ranking fields taken from ``record``."""
        self.add(record.key, record.edited_at, record.provenance.collected_at, payload)

    def add_block(self, block: Block) -> None:
        """Remember every observation of ``block``, after those added before (input order)."""
        if not len(block):
            return
        self._flush_pending()
        self._append(block)

    def _flush_pending(self) -> None:
        if len(self._pending):
            pending, self._pending = self._pending, BlockBuilder()
            self._append(pending.build())

    def _append(self, block: Block) -> None:
        self._ranks.add(block, self.total)
        spill = self._spill
        spill.write(_HEADER.pack(len(block), len(block.main), len(block.side)))
        spill.write(block.main_ends)
        spill.write(block.side_ends)
        spill.write(block.main)
        spill.write(block.side)
        spill.write(block.hashes)
        self.total += len(block)

    @property
    def duplicates(self) -> int:
        """Observations dropped because a later one of the same key won (valid after ``winners``)."""
        return self.total - self.unique

    def _mask(self) -> np.ndarray:
        import numpy as np

        mask = np.zeros(self.total, dtype=bool)
        for rows in self._ranks.buckets():
            hi, lo = rows["hi"], rows["lo"]
            # equal (edit, collect) times: the later input (position) sorts last
            order = np.lexsort((rows["at"], rows["collected"], rows["edited"], lo, hi))
            shi, slo = hi[order], lo[order]
            last = np.ones(len(rows), dtype=bool)
            last[:-1] = (shi[1:] != shi[:-1]) | (slo[1:] != slo[:-1])
            mask[rows["at"][order[last]]] = True
        return mask

    def _blocks(self) -> Iterator[tuple[list[bool], array, array, bytes, bytes, bytes]]:
        """(winner flags, main ends, side ends, main, side, key hashes) per spilled block, in input order;
        closes the spill."""
        self._flush_pending()
        mask = self._mask()
        self.unique = int(mask.sum())
        self._ranks.close()
        spill = self._spill
        try:
            spill.flush()
            spill.seek(0)
            start = 0
            while start < self.total:
                count, main_size, side_size = _HEADER.unpack(spill.read(_HEADER.size))
                main_ends, side_ends = array("Q"), array("Q")
                main_ends.frombytes(spill.read(8 * count))
                side_ends.frombytes(spill.read(8 * count))
                main, side, hashes = spill.read(main_size), spill.read(side_size), spill.read(16 * count)
                yield mask[start : start + count].tolist(), main_ends, side_ends, main, side, hashes
                start += count
        finally:
            spill.close()

    def winners(self) -> Iterator[bytes]:
        """The winning ``main`` payloads in input order (closes the spill file when exhausted)."""
        for flags, main_ends, _, main, _, _ in self._blocks():
            begin = 0
            for won, end in zip(flags, main_ends):
                if won:
                    yield main[begin:end]
                begin = end

    def winning_blocks(self) -> Iterator[bytes]:
        """The winning ``main`` payloads of each added block, concatenated (a block whose observations all win
        as it is), in input order; blocks with no winner are skipped. Closes the spill file when exhausted."""
        for flags, main_ends, _, main, _, _ in self._blocks():
            if all(flags):
                yield main
                continue
            begin, kept = 0, []
            for won, end in zip(flags, main_ends):
                if won:
                    kept.append(main[begin:end])
                begin = end
            if kept:
                yield b"".join(kept)

    def holds(self, keys: Iterable[str]) -> set[str]:
        """Those of ``keys`` observed so far (any observation, winning or not)."""
        keys = list(keys)
        if not keys:
            return set()
        self._flush_pending()
        digests = list(_split(key_hashes(keys)))
        held = self._ranks.held(digests)
        return {key for key, digest in zip(keys, digests) if digest in held}

    def write_winners(self, main_out: IO[bytes], side_out: IO[bytes] | None = None,
                      rewrite: Callable[[bytes], bytes] | None = None, rewrite_keys: Iterable[str] = (),
                      keep_side: Callable[[bytes], bool] = lambda payload: True) -> None:
        """Write the winners' ``main`` payloads to ``main_out`` and ``side`` payloads to ``side_out``, in input
        order, as they are (payloads carry their own separators); a block that wins whole is one write.
        The main payload of a winner whose key is in ``rewrite_keys`` goes through ``rewrite`` first; its side
        payload is written only when ``keep_side`` of the rewritten payload is true."""
        targets = set(_split(key_hashes(list(rewrite_keys)))) if rewrite is not None else set()
        for flags, main_ends, side_ends, main, side, hashes in self._blocks():
            if targets and not targets.isdisjoint(_split(hashes)):
                self._write_rewritten(flags, main_ends, side_ends, main, side, hashes, main_out, side_out,
                                      rewrite, targets, keep_side)  # type: ignore[arg-type]
                continue
            if all(flags):
                main_out.write(main)
                if side_out is not None:
                    side_out.write(side)
                continue
            main_begin = side_begin = 0
            for won, main_end, side_end in zip(flags, main_ends, side_ends):
                if won:
                    main_out.write(main[main_begin:main_end])
                    if side_out is not None and side_end > side_begin:
                        side_out.write(side[side_begin:side_end])
                main_begin, side_begin = main_end, side_end

    @staticmethod
    def _write_rewritten(flags: list[bool], main_ends: array, side_ends: array, main: bytes, side: bytes,
                         hashes: bytes, main_out: IO[bytes], side_out: IO[bytes] | None,
                         rewrite: Callable[[bytes], bytes], targets: set[bytes],
                         keep_side: Callable[[bytes], bool]) -> None:  # fmt: skip
        main_begin = side_begin = 0
        for i, (won, main_end, side_end) in enumerate(zip(flags, main_ends, side_ends)):
            if won:
                payload = main[main_begin:main_end]
                rewritten = hashes[16 * i : 16 * i + 16] in targets
                payload = rewrite(payload) if rewritten else payload
                main_out.write(payload)
                if side_out is not None and side_end > side_begin and (not rewritten or keep_side(payload)):
                    side_out.write(side[side_begin:side_end])
            main_begin, side_begin = main_end, side_end

    def close(self) -> None:
        """Drop the spill files without reading them (on error paths)."""
        self._ranks.close()
        self._spill.close()


class BucketSpill:
    """Rows of a numpy structured dtype appended to a temporary file in ``COUNT`` buckets (chosen by the
    caller, e.g. by a hash's top bits) and read back a bucket at a time in the order they were added, so
    work done per bucket holds ~1/COUNT of the rows, however many there are."""

    COUNT = 64

    def __init__(self, dtype: np.dtype, prefix: str) -> None:
        self.dtype = dtype
        self._file = tempfile.TemporaryFile(prefix=prefix)
        self._spans = [array("q") for _ in range(self.COUNT)]  # (offset, length) pairs of each bucket

    def write(self, rows: np.ndarray, which: np.ndarray) -> None:
        """Append ``rows``, row i to bucket ``which[i]`` (0 <= which < COUNT)."""
        import numpy as np

        order = np.argsort(which, kind="stable")  # stable: each bucket keeps the order rows were added in
        bounds = np.searchsorted(which[order], np.arange(self.COUNT + 1))
        self._file.seek(0, os.SEEK_END)
        offset = self._file.tell()
        self._file.write(rows[order].tobytes())
        size = self.dtype.itemsize
        for bucket in np.flatnonzero(np.diff(bounds)).tolist():
            begin, end = int(bounds[bucket]), int(bounds[bucket + 1])
            self._spans[bucket].extend((offset + begin * size, (end - begin) * size))

    def rows(self, bucket: int) -> np.ndarray:
        """The rows of one bucket, in the order added."""
        import numpy as np

        chunks = []
        spans = self._spans[bucket]
        for offset, length in zip(spans[::2], spans[1::2]):
            self._file.seek(offset)
            chunks.append(self._file.read(length))
        return np.frombuffer(b"".join(chunks), self.dtype)

    def close(self) -> None:
        self._file.close()


class _RankBuckets(BucketSpill):
    """The rank rows of every observation (key hash, times, position), gathered into chunks and spilled by
    the hash's first byte: deciding the winners holds one bucket, however many observations there are."""

    _CHUNK = 8192  # rows gathered before a write

    def __init__(self) -> None:
        import numpy as np

        fields = [("hi", "<i8"), ("lo", "<i8"), ("edited", "<f8"), ("collected", "<f8"), ("at", "<i8")]
        super().__init__(np.dtype(fields), "crawl-dedupe-ranks-")
        self._pending: list[np.ndarray] = []
        self._count = 0  # rows pending

    def add(self, block: Block, start: int) -> None:
        """The rows of ``block``, whose first observation is the ``start``-th added."""
        import numpy as np

        rows = np.empty(len(block), self.dtype)
        pairs = np.frombuffer(block.hashes, dtype="<i8").reshape(-1, 2)
        rows["hi"], rows["lo"] = pairs[:, 0], pairs[:, 1]
        rows["edited"], rows["collected"] = np.frombuffer(block.edited), np.frombuffer(block.collected)
        rows["at"] = np.arange(start, start + len(block))
        self._pending.append(rows)
        self._count += len(rows)
        if self._count >= self._CHUNK:
            self._flush()

    def _flush(self) -> None:
        import numpy as np

        if self._pending:  # one write per _CHUNK rows: the file holds N / _CHUNK spans per bucket
            rows = np.concatenate(self._pending)
            self._pending, self._count = [], 0
            self.write(rows, (rows["hi"] & 0xFF) >> 2)  # the hash's first byte (little-endian): 2**6 buckets

    def buckets(self) -> Iterator[np.ndarray]:
        """The rows of each non-empty bucket, one bucket at a time."""
        self._flush()
        yield from (self.rows(bucket) for bucket in range(self.COUNT) if self._spans[bucket])

    def held(self, digests: Iterable[bytes]) -> set[bytes]:
        """Those of the 128-bit key hashes ``digests`` added, reading each bucket they fall in once."""
        self._flush()
        wanted: dict[int, set[bytes]] = {}
        for digest in digests:
            wanted.setdefault(digest[0] >> 2, set()).add(digest)
        found: set[bytes] = set()
        for bucket, digests_in in wanted.items():
            rows = self.rows(bucket)
            found |= digests_in & set(_split(rows[["hi", "lo"]].astype([("hi", "<i8"), ("lo", "<i8")]).tobytes()))
        return found


def _split(hashes: bytes) -> Iterator[bytes]:
    return (hashes[i : i + 16] for i in range(0, len(hashes), 16))


def dedupe_latest(records: Iterable[Record]) -> Iterator[Record]:
    """One record per ``key`` (latest observation wins), in first-pass input order, in bounded memory."""
    for payload in latest_payloads(records):
        yield Record.model_validate_json(payload)


def latest_payloads(records: Iterable[Record]) -> Iterator[bytes]:
    """``dedupe_latest`` as the winners' JSON (``model_dump_json``), for callers that need no second validation."""
    deduper = Deduper()
    try:
        for record in records:
            deduper.add_record(record, record.model_dump_json().encode())
    except BaseException:
        deduper.close()
        raise
    yield from deduper.winners()
