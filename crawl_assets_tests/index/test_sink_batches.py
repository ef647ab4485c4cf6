"""The sink's bodies: lines go into a body until the next would pass ``batch_bytes`` (a larger line goes alone)
or the body holds ``batch_docs``; a whole batch of lines is cut the same as lines given one at a time,
whichever way each call came."""

from __future__ import annotations

import random

import pytest

from crawl_assets.index.sink import BulkSink

pytestmark = pytest.mark.unit


class _Bodies:
    """The batching state of a sink without its client: closed bodies are collected."""

    _append_lines = BulkSink._append_lines
    _append = BulkSink._append

    def __init__(self, batch_bytes: int, batch_docs: int) -> None:
        self.batch_bytes, self.batch_docs = batch_bytes, batch_docs
        self._open: list[bytes] = []
        self._open_size = 0
        self.bodies: list[list[bytes]] = []

    def _close_batch(self) -> None:
        if self._open:
            self.bodies.append(self._open)
        self._open, self._open_size = [], 0


def _one_at_a_time(calls: list[list[bytes]], batch_bytes: int, batch_docs: int) -> list[list[bytes]]:
    """The rule written line by line."""
    bodies: list[list[bytes]] = []
    body: list[bytes] = []
    for line in (line for call in calls for line in call):
        if body and sum(map(len, body)) + len(line) > batch_bytes:
            bodies.append(body)
            body = []
        body.append(line)
        if len(body) >= batch_docs or sum(map(len, body)) >= batch_bytes:
            bodies.append(body)
            body = []
    return bodies + ([body] if body else [])


def test_bodies_cut_at_bytes_and_docs_as_line_by_line():
    rng = random.Random(5)
    for _ in range(500):
        batch_bytes, batch_docs = rng.randint(1, 300), rng.randint(1, 12)
        calls = [[bytes(rng.randint(1, 120)) for _ in range(rng.randint(0, 30))] for _ in range(rng.randint(1, 5))]
        sink = _Bodies(batch_bytes, batch_docs)
        for call in calls:  # a batch of lines, or the same lines one at a time (the per-document path)
            if rng.random() < 0.5:
                sink._append_lines(call)
            else:
                for line in call:
                    sink._append(line)
        sink._close_batch()
        assert sink.bodies == _one_at_a_time(calls, batch_bytes, batch_docs), (batch_bytes, batch_docs)


def test_a_line_larger_than_a_body_goes_alone():
    sink = _Bodies(batch_bytes=10, batch_docs=100)
    sink._append_lines([b"ab", b"x" * 25, b"cd", b"ef"])
    sink._append(b"gh")
    sink._close_batch()
    assert sink.bodies == [[b"ab"], [b"x" * 25], [b"cd", b"ef", b"gh"]]


def test_send_pools_raise_the_young_gc_threshold_while_used_and_restore_it():
    """A pool in use raises the collector's first threshold (however many pools overlap); the last pool's last
    user gives the previous thresholds back."""
    import gc

    from crawl_assets.index.bulk_send import GC_YOUNG_THRESHOLD, SendPool

    before = gc.get_threshold()
    gc.set_threshold(700, 11, 12)
    try:
        first, second = SendPool(1, 1), SendPool(1, 1)
        first.attach()
        first.attach()
        assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, 11, 12)
        second.attach()
        first.detach()
        first.detach()  # the first pool is done; the second still runs
        assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, 11, 12)
        second.detach()
        assert gc.get_threshold() == (700, 11, 12)
    finally:
        gc.set_threshold(*before)
