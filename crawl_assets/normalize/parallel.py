"""Normalize a line-based input on several processes, keeping input order and line numbers.

Splittable formats (``FormatSpec.splittable``) hold one self-contained item per line, so a file splits into chunks
of whole lines that processes normalize independently (each chunk knows its first line number, so
rejections and ``provenance.raw_line`` stay exact). Results come back in input order: the output is the
same as with one process. With ``jobs`` processes, ``jobs - 1`` are workers and the calling process
normalizes chunks too whenever every worker already has its next chunk queued (it would otherwise only
wait), so ``jobs=2`` uses two cores with one extra process's memory. At most ``4 * jobs`` chunks are in
flight, so memory stays bounded whatever the input size.

Every chunk comes back as one ``Encoded``: a dedupe ``Block`` (keys hashed, record and edge lines
serialized and concatenated) plus its rejections: a few buffers to pickle, and a few bulk appends for the
process that dedupes, instead of Python work per record in the one process every record goes through.
"""

from __future__ import annotations

import dataclasses
import gc
import io
import multiprocessing
import os
import signal
import stat
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import islice
from typing import IO, Any

from crawl_assets.core import catalog
from crawl_assets.normalize.build import Item
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.dedupe import Block, BlockBuilder
from crawl_assets.normalize.output import add_document
from crawl_assets.normalize.reading import (
    LongLine, closing_rejection, decode_input, format_chosen_by_user, get_normalizer, line_blocks, line_cap,
    long_line_rejections, normalize_input, opening_rejection,
)
from crawl_assets.schema.record import Rejection

CHUNK_BYTES = 4 << 20
MAX_AUTO_JOBS = 2  # processes ``auto_jobs`` chooses at most: two keep the peak RSS under 150 MiB
AUTO_JOBS_MIN_BYTES = 16 << 20  # inputs smaller than this are normalized by one process
_POOL_SWITCH_INTERVAL = 0.0002
BLOCK_ITEMS = 2000  # items per block when one process reads the whole stream

# The serialized records of a run of input items (in a dedupe block) and the rejections among them.
Encoded = tuple[Block, list[Rejection]]
# Appends one record document to a block (``output.add_document``: record and edge lines for the CLI); a
# module-level function, so that it crosses to a worker process by name.
AddDocument = Callable[[BlockBuilder, dict[str, Any]], None]


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic GC while a chunk is normalized: the documents are acyclic and short-lived, and the
    collector's passes over them cost ~10% of the run; cycles made meanwhile are collected afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def encode_items(items: Iterable[Item], add: AddDocument = add_document) -> Encoded:
    """Serialize the documents of ``normalize_documents``-style output into one block (each through ``add``);
    rejections aside."""
    block = BlockBuilder()
    rejections: list[Rejection] = []
    with _gc_paused():
        for item in items:
            if isinstance(item, Rejection):
                rejections.append(item)
            else:
                add(block, item)  # type: ignore[arg-type]
    return block.build(), rejections


# A chunk for a worker: its bytes, or where to read them in the input file (fd, offset, length) when the
# worker shares the open file (forked): then the chunk does not cross a pipe, only its place does.
Chunk = bytes | tuple[int, int, int]


def _work(task: tuple[str, str, NormalizeContext, int, Chunk, AddDocument]) -> Encoded:
    fmt, name, context, first_line, chunk, add = task
    blob = chunk if isinstance(chunk, bytes) else _pread(*chunk)
    chunk_context = dataclasses.replace(context, first_line=first_line)
    return encode_items(get_normalizer(fmt)(io.BytesIO(blob), name=name, context=chunk_context, validate=False), add)


def _pread(fd: int, offset: int, length: int) -> bytes:
    parts = []
    while length > 0:
        part = os.pread(fd, length, offset)
        if not part:
            raise EOFError(f"input file shrank while being read (at byte {offset})")
        parts.append(part)
        offset += len(part)
        length -= len(part)
    return b"".join(parts)


def _regular_file(stream: IO[bytes]) -> int | None:
    """The descriptor of ``stream`` when it reads a regular file as it is (not stdin, a pipe or gzip)."""
    if not isinstance(stream, io.BufferedReader) or not isinstance(stream.raw, io.FileIO):
        return None
    try:
        fd = stream.fileno()
        return fd if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except (OSError, ValueError):
        return None


def _worker_init() -> None:
    """Workers die on SIGTERM (the pool's terminate) and leave SIGINT to the parent, whatever handlers the
    forking process had installed (Dagster installs its own in a run)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _Done:
    """A chunk the calling process normalized itself, queued like a worker's pending result."""

    def __init__(self, value: Encoded) -> None:
        self.value = value

    def ready(self) -> bool:
        return True

    def get(self) -> Encoded:
        return self.value


def splittable_formats() -> frozenset[str]:
    """Formats whose lines are independent items: a file may be split across processes."""
    return frozenset(name for name, spec in catalog.catalog().formats().items() if spec.splittable)


def auto_jobs(size: int) -> int:
    """Processes for an input of ``size`` bytes: one per CPU (at most ``MAX_AUTO_JOBS``: the peak RSS stays
    under 150 MiB) when it is big enough to pay for starting them, else one."""
    return min(os.cpu_count() or 1, MAX_AUTO_JOBS) if size >= AUTO_JOBS_MIN_BYTES else 1


def normalize_encoded(
    fmt: str, stream: IO[bytes], *, name: str, context: NormalizeContext, jobs: int = 1,
    chunk_bytes: int = CHUNK_BYTES, add: AddDocument = add_document,
) -> Iterator[Encoded]:  # fmt: skip
    """Encoded records and rejections of one stream, in input order, on ``jobs`` processes for line formats;
    each record document goes into its block through ``add``."""
    if jobs <= 1 or fmt not in splittable_formats():
        items = iter(normalize_input(fmt, stream, name=name, context=context, validate=False))
        while True:
            block, rejections = encode_items(islice(items, BLOCK_ITEMS), add)
            if not len(block) and not rejections:
                return
            yield block, rejections
    decoded = decode_input(stream)
    refusal = opening_rejection(fmt, decoded, name, sniff=format_chosen_by_user(context))
    if refusal is not None:
        yield BlockBuilder().build(), [refusal]
        return
    cap = line_cap(context.method, context.max_line_bytes)
    yield from _pooled(fmt, decoded.stream, name, context, jobs, chunk_bytes, add, cap)
    ending = closing_rejection(fmt, decoded, name)
    if ending is not None:
        yield BlockBuilder().build(), [ending]


def _pooled(fmt: str, stream: IO[bytes], name: str, context: NormalizeContext, jobs: int,
            chunk_bytes: int, add: AddDocument, cap: int) -> Iterator[Encoded]:  # fmt: skip
    """``normalize_encoded`` of decoded content on ``jobs`` processes: chunks of whole lines (a line longer than
    ``cap`` is read through unkept and comes back as its rejection, in its place)."""
    workers = jobs - 1
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    switch_interval = sys.getswitchinterval()
    # The pool's threads in this process move chunks through pipes in 64 KiB steps, each needing the GIL;
    # while this thread normalizes they would wait up to 5 ms (the default interval) per step.
    sys.setswitchinterval(min(switch_interval, _POOL_SWITCH_INTERVAL))
    try:
        with multiprocessing.get_context(method).Pool(workers, initializer=_worker_init) as pool:
            pending: deque[Any] = deque()
            fd = _regular_file(stream) if method == "fork" else None
            start = stream.tell() if fd is not None else 0
            for first, offset, blob in line_blocks(stream, chunk_bytes, cap):
                if isinstance(blob, LongLine):
                    pending.append(_Done((BlockBuilder().build(), list(long_line_rejections([blob], cap, name)))))
                    continue
                queued = sum(1 for result in pending if not result.ready())
                if queued < 2 * workers:  # each worker busy with one chunk and one more waiting
                    chunk: Chunk = blob if fd is None else (fd, start + offset, len(blob))
                    pending.append(pool.apply_async(_work, ((fmt, name, context, first, chunk, add),)))
                else:
                    pending.append(_Done(_work((fmt, name, context, first, blob, add))))
                while pending and (pending[0].ready() or len(pending) >= 4 * jobs):
                    yield pending.popleft().get()
            while pending:
                yield pending.popleft().get()
            # Let the workers exit on their own: the pool's __exit__ would terminate() them, and a worker
            # inherits this process's signal handlers and locks, so a kill mid-queue-read can hang the join.
            pool.close()
            pool.join()
    finally:
        sys.setswitchinterval(switch_interval)
