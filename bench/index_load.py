"""Bench: the index load alone (``pipeline/index/stage.py: load``) beside the replay ceiling, interleaved, on one warmed node.

N generated X records (``bench/normalize.py``'s input) are normalized and related into a lake once; then, per
repetition, each contender loads the pending parts into a fresh tenant (the index step's load, client CPU and
node CPU measured around it), and the documents it left are read back and replayed (``bench/replay.py``: 8 MiB
bodies, the best of 2, 3 and 4 in flight and of two orders, refresh off, ``text_lemma`` added back) as that repetition's ceiling. Contenders are sink
tunings (bytes per body, requests in flight per family). ``--profile`` runs one more load under cProfile and
prints the client's top functions. ``--encode`` starts no node: it times the client's three costs alone in CPU
seconds per 100k records (records' documents, edges' documents, the sink's line assembly and bodies), the best of
``--runs``.

    python bench/index_load.py [--records 30000] [--runs 3] [--url URL] [--profile] [--encode]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from normalize import make_input  # noqa: E402  (bench/normalize.py)

MiB = 1024 * 1024
PLATFORM, SOURCE_NAME = "x", "bench"
CONTENDERS = {  # beside the load's own tuning (``load.SINK_TUNING``: one pool of 4 in flight for both families)
    "the load's tuning": {},
    "one pool, 6 in flight": {"batch_bytes": 8 * MiB, "concurrency": 6, "queue_batches": 2},
}


def build_lake(root: Path, records: int, tenant: str) -> tuple[object, str]:
    from crawl_assets.lake import Lake
    from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
    from crawl_assets.pipeline.relate.stage import refresh_relations

    source = f"{tenant}.{PLATFORM}.{SOURCE_NAME}"
    data = root / "input.jsonl"
    make_input(data, records)
    lake = Lake(str(root / "lake"))
    with data.open("rb") as stream:
        batch = lake.write_raw_batch(tenant=tenant, platform=PLATFORM, source=source, fmt="x-v2", method="api",
                                     batch_id="20260101T100000000000Z-r1-0000", run_id="r1", stream=stream,
                                     collected_at=datetime(2026, 1, 1, 12, tzinfo=timezone.utc))
    normalize_batch(lake, batch, lake.table_part(TABLE, tenant, PLATFORM, source, batch.manifest.batch_id))
    refresh_relations(lake, tenant, PLATFORM, source)
    return lake, source


def load_once(client, lake, lake_tenant: str, source: str, tenant: str, tuning: dict, profile: bool = False) -> dict:
    """The index step's load of every part of the lake's source into ``tenant``'s indices (the lake's parts are
    read as the step reads them; only the tenant written to differs)."""
    from crawl_assets.index.indices import setup_indices
    from crawl_assets.pipeline.index.stage import load
    from crawl_assets.pipeline.index.stage import pending_parts, pending_records, scan_keys
    from replay import node_cpu_seconds

    setup_indices(client, [tenant])
    pending = pending_records(lake, lake_tenant, PLATFORM, source, pending_parts(lake, lake_tenant, PLATFORM, source)[1])
    seen, _ = scan_keys(lake, lake_tenant, PLATFORM, source, pending.keys)
    node0, cpu0, t0 = node_cpu_seconds(client), time.process_time(), time.perf_counter()
    main0 = time.thread_time()
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    done = _load_as(load, client, lake, lake_tenant, tenant, source, pending, seen, tuning)
    if profiler:
        profiler.disable()
    wall, cpu, main = time.perf_counter() - t0, time.process_time() - cpu0, time.thread_time() - main0
    node = node_cpu_seconds(client) - node0
    docs = done.records.docs + done.edges.docs
    assert done.records.failed == done.edges.failed == 0, "the load was refused"
    out = {"docs": docs, "wall": wall, "cpu": cpu, "node": node, "records": done.records.docs, "main": main}
    if profiler:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
        out["profile"] = text.getvalue()
    return out


def _load_as(load, client, lake, lake_tenant, tenant, source, pending, seen, tuning):
    """``load`` writing to ``tenant``'s indices while reading the lake's ``lake_tenant`` parts."""
    from crawl_assets.pipeline.index import stage as module

    real = module.BulkSink

    def sink(client_, **kwargs):
        return real(client_, **{**kwargs, "tenant": tenant})

    module.BulkSink = sink
    try:
        return load(client, lake, lake_tenant, PLATFORM, source, pending, seen, run_id="bench", **tuning)
    finally:
        module.BulkSink = real


def encode_cpu(lake, lake_tenant: str, source: str, runs: int) -> dict[str, float]:
    """CPU seconds per 100k records of the load's client work, without a node: ``record_documents`` over
    slices of ``ENCODE_ROWS`` and ``edge_documents`` over the edge parts' row groups (as the load calls them),
    then ``BulkSink.add_encoded`` of what they built into sinks whose bodies go nowhere (best of ``runs``)."""
    from elasticsearch import Elasticsearch

    from crawl_assets.index.documents import EDGE_FIELDS, edge_documents, record_documents
    from crawl_assets.index.sink import BulkSink
    from crawl_assets.pipeline.index.stage import EDGES_TABLE, ENCODE_ROWS, RECORDS_TABLE, SINK_TUNING

    class Nowhere(BulkSink):
        def _submit(self, batch) -> None:  # the body is built, not sent
            self.stats.docs -= len(batch)

    records = [t for _, t in lake.read_parts(RECORDS_TABLE, lake_tenant, PLATFORM, source)]
    parts = [lake.table_part(EDGES_TABLE, lake_tenant, PLATFORM, source, batch_id)
             for batch_id in lake.part_ids(EDGES_TABLE, lake_tenant, PLATFORM, source)]
    edges = [group for part in parts for group in lake.iter_part_row_groups(part, columns=list(EDGE_FIELDS))]
    n = sum(t.num_rows for t in records)
    best: dict[str, float] = {}
    for _ in range(runs):
        got, t0 = [], time.process_time()
        for table in records:
            got += [record_documents(table.slice(start, ENCODE_ROWS), lake_tenant)
                    for start in range(0, table.num_rows, ENCODE_ROWS)]
        t1 = time.process_time()
        done = [edge_documents(group, [1 << 40] * group.num_rows) for group in edges]
        t2 = time.process_time()
        sinks = [Nowhere(Elasticsearch("http://127.0.0.1:9"), family=family, tenant=lake_tenant, refresh=False,
                         deadletter_root=tempfile.gettempdir(), ensure_indices=False,
                         batch_bytes=SINK_TUNING["batch_bytes"]) for family in ("records", "edges")]
        t3 = time.process_time()
        for encoded in got:
            sinks[0].add_encoded(encoded)
        for encoded in done:
            sinks[1].add_encoded(encoded)
        for sink in sinks:
            sink.finish()
        t4 = time.process_time()
        for sink in sinks:
            sink._drain()
        edge_docs = sum(len(e.ids) for e in done)
        for name, seconds in (("records", t1 - t0), ("edges", t2 - t1), ("sink", t4 - t3)):
            best[name] = min(best.get(name, float("inf")), seconds * 100_000 / n)
        best["edge docs per record"] = edge_docs / n
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=30_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--url", help="an existing cluster instead of a local real node")
    parser.add_argument("--heap", default="1g")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--encode", action="store_true", help="the client's CPU alone, without a node")
    args = parser.parse_args()
    if args.encode:
        with tempfile.TemporaryDirectory() as tmp:
            lake, source = build_lake(Path(tmp), args.records, "lakebench")
            got = encode_cpu(lake, "lakebench", source, args.runs)
        print(f"client CPU s per 100k records ({args.records:,} X records, best of {args.runs}): "
              + ", ".join(f"{k} {v:.2f}" for k, v in got.items()))
        return

    from crawl_assets.index.client import build_client
    from crawl_assets_tests.es_node.node import RealNode
    from replay import best_replay, drop, read_back, warm

    node = None if args.url else RealNode(heap=args.heap).start()
    url = args.url or node.url  # type: ignore[union-attr]
    try:
        with tempfile.TemporaryDirectory() as tmp, build_client([url], request_timeout=300) as client:
            # (the step's own client: orjson parses the bulk responses, as in the step)
            lake, source = build_lake(Path(tmp), args.records, "lakebench")
            load_before = os.getloadavg()
            load_once(client, lake, "lakebench", source, "warm", {})  # JIT and caches warmed
            warm(client, "warm")
            drop(client, "warm")
            rows: dict[str, list[dict]] = {name: [] for name in (*CONTENDERS, "ceiling")}
            names = list(CONTENDERS)
            for run in range(args.runs):
                for name in names[run % len(names):] + names[:run % len(names)]:  # each goes first in turn
                    tenant = f"bench{run}"
                    got = load_once(client, lake, "lakebench", source, tenant, CONTENDERS[name])
                    rows[name].append(got)
                    lines = read_back(client, tenant, "ceiling")
                    ceiling = best_replay(client, lines, "ceiling", body_mib=8)
                    rows["ceiling"].append({"docs": ceiling.docs, "wall": ceiling.seconds, "cpu": 0.0,
                                            "node": ceiling.node_cpu_s, "records": got["records"],
                                            "ratio": got["docs"] / got["wall"] / ceiling.docs_per_s})
                    drop(client, tenant)
            if args.profile:
                profiled = load_once(client, lake, "lakebench", source, "profiled", {}, profile=True)
                drop(client, "profiled")
            load_after = os.getloadavg()
    finally:
        if node is not None:
            node.stop()
    print(f"\n== index load of {args.records:,} X records, {args.runs} interleaved runs (median), {os.cpu_count()} CPUs")
    print(f"{'what':<28}{'docs/s':>9}{'client CPU s':>14}{'producer s':>12}{'node µs/record':>16}  "
          "ratio to that run's ceiling (each run)")
    for name, got in rows.items():
        rate = statistics.median(g["docs"] / g["wall"] for g in got)
        cpu = statistics.median(g["cpu"] for g in got)
        producer = statistics.median(g.get("main", 0.0) for g in got)  # the load's own thread; the rest: send workers
        node_us = statistics.median(1e6 * g["node"] / g["records"] for g in got)
        ratios = "" if name == "ceiling" else " / ".join(
            f"{g['docs'] / g['wall'] / (c['docs'] / c['wall']):.2f}x" for g, c in zip(got, _pairs(rows, name)))
        print(f"{name:<28}{rate:>9,.0f}{cpu:>14.2f}{producer:>12.2f}{node_us:>16.0f}  {ratios}")
    print(f"load average before {'/'.join(f'{x:.1f}' for x in load_before)}, after "
          f"{'/'.join(f'{x:.1f}' for x in load_after)}")
    if args.profile:
        print(f"profiled load: client CPU {profiled['cpu']:.2f} s, of it the producer's thread {profiled['main']:.2f} s "
              "(under cProfile), the send workers the rest")
        print(profiled["profile"])


def _pairs(rows: dict[str, list[dict]], name: str) -> list[dict]:
    """The ceilings measured right after each load of ``name``."""
    order: list[str] = []
    names = [n for n in rows if n != "ceiling"]
    for run in range(len(rows[name])):
        order += names[run % len(names):] + names[:run % len(names)]
    return [rows["ceiling"][i] for i, n in enumerate(order) if n == name]


if __name__ == "__main__":
    main()
