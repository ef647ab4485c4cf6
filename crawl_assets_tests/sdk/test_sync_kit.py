"""The shared sync kit without any API: the buffer stores pages with the state that covers them (preamble
first, a copy of the state, nothing lost when the store fails), the budget stops a run, and the writer puts
the batch in the lake before it saves the checkpoint."""

from __future__ import annotations

import gzip

import pytest

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.http import ClientStats
from crawl_assets.sdk.sync import Budget, PageBuffer, RawBatchWriter, SyncStats


class Recorder:
    def __init__(self, fail: bool = False):
        self.calls: list[tuple[list[bytes], dict, dict]] = []
        self.fail = fail

    def __call__(self, lines, state, info):
        if self.fail:
            raise OSError("disk full")
        self.calls.append((lines, state, info))


def test_the_buffer_flushes_every_few_pages_with_a_copy_of_the_state():
    store, stats = Recorder(), SyncStats()
    buffer = PageBuffer(store, stats, pages_per_batch=2)
    buffer.preamble = [b"context"]
    state = {"cursor": 1}
    buffer.add(b"p1", state, endpoint="a")
    buffer.add(b"note", state, page=False)
    state["cursor"] = 2
    buffer.add(b"p2", state, endpoint="b")
    state["cursor"] = 3
    assert store.calls == [([b"context", b"p1", b"note", b"p2"], {"cursor": 2}, {"endpoint": "b"})]
    assert (stats.pages, stats.batches) == (2, 1)
    buffer.flush(state, only_lines=True)
    assert len(store.calls) == 1, "nothing buffered: only_lines stores nothing"
    buffer.flush(state)
    assert store.calls[-1] == ([], {"cursor": 3}, {}) and stats.batches == 1, "the state alone moved"


def test_a_failing_store_marks_the_buffer_broken():
    buffer = PageBuffer(Recorder(fail=True), SyncStats())
    buffer.add(b"p1", {}, page=False)
    with pytest.raises(OSError):
        buffer.flush({})
    assert buffer.broken and buffer.lines == [b"p1"]


def test_the_budget_counts_requests_pages_and_time():
    stats = ClientStats()
    stats.requests["x"] = 3
    assert Budget(max_requests=4).allows(stats) and not Budget(max_requests=3).allows(stats)
    assert Budget(max_pages=2).allows(pages=1) and not Budget(max_pages=2).allows(pages=2)
    assert not Budget(deadline=10.0).allows(stats, lambda: 10.0) and Budget(deadline=10.0).allows(stats, lambda: 9.0)


def test_the_writer_stores_the_batch_before_the_checkpoint(tmp_path):
    lake = Lake(str(tmp_path))
    entry = SourceEntry(name="s", tenant="acme", platform="intercom", kind="workspace", identifier="q")
    saved: list[tuple[dict, int]] = []
    writer = RawBatchWriter(lake, entry, "run-1", "intercom", lambda state: saved.append((state, len(writer.batches))))
    writer.store([b'{"a":1}'], {"cursor": 1}, {"pages": 1})
    writer.store([], {"cursor": 2}, {})
    assert saved == [({"cursor": 1}, 1), ({"cursor": 2}, 1)], "the checkpoint follows its batch; no empty batch"
    batch = writer.batches[0]
    assert batch.manifest.extra == {"pages": 1} and batch.manifest.format == "intercom"
    assert gzip.decompress((tmp_path / batch.path).read_bytes()) == b'{"a":1}\n'
