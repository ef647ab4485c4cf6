"""Bench: the bulk sink vs a raw NDJSON bulk loop (the floor), against the protocol test server.

Each measurement runs in a fresh child process (so peak RSS is that of one indexing run) against a fresh
test server in another process started with ``--no-validate`` (so the figure measures the client side,
not the Python stand-in). Runs are interleaved and the median is printed, with the ratio to the floor.

    python bench/es_sink.py [--docs 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _record(i: int, tenant: str) -> dict[str, Any]:
    tweet = 1_700_000_000_000_000_000 + i
    return {
        "key": f"x:{tweet}", "platform": "x", "tenant": tenant, "source": "bench", "kind": "post",
        "native_id": str(tweet), "author_id": str(i % 5000), "author_handle": f"user{i % 5000}",
        "created_at": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{i % 59:02d}Z",
        "edited_at": None, "deleted": False, "deleted_at": None,
        "text": f"این یک پست آزمایشی است شماره {i} درباره #موضوع{i % 50} و @user{i % 97} https://t.co/x{i}",
        "text_clean": f"این یک پست آزمایشی است شماره {i} درباره موضوع{i % 50}", "lang": "fa",
        "reply_to": None, "quote_of": None, "repost_of": None, "conversation_id": f"x:{tweet}",
        "hashtags": [f"موضوع{i % 50}"], "mentions": [f"user{i % 97}"], "urls": [f"https://example.com/{i}"],
        "media": [], "metrics": {"likes": i % 100, "reposts": i % 7, "replies": 0, "quotes": 0, "views": i,
                                 "forwards": None, "bookmarks": None, "reactions": None},
        "metadata": {"possibly_sensitive": False},
        "provenance": {"collected_at": "2026-11-30T00:00:00Z", "method": "api", "source": "bench",
                       "format": "x-v2", "run_id": "bench", "raw_pointer": "raw/x/bench/0001.jsonl.gz",
                       "raw_line": i + 1},
        "enrichment": {},
    }


def synthetic_records(n: int, tenant: str = "bench", pool: int = 4096) -> Iterator[dict[str, Any]]:
    """Records shaped like ``Record.model_dump(mode="json")`` (~1 KB, Persian text, 12 months), streamed.

    Each is a shallow copy of one of ``pool`` prepared records with its own key, so producing the input
    costs ~1 µs per record and neither side of the comparison is measuring the bench's own generator."""
    prepared = [_record(i, tenant) for i in range(min(pool, n))]
    for i in range(n):
        doc = dict(prepared[i % pool])
        doc["key"] = doc["conversation_id"] = f"x:{1_700_000_000_000_000_000 + i}"
        yield doc


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _figures(n: int, started: float, cpu0: float) -> dict[str, Any]:
    """Wall docs/s, docs per second of this (client) process's CPU time, and peak RSS."""
    elapsed = time.perf_counter() - started
    return {"docs_per_s": n / elapsed, "docs_per_cpu_s": n / max(_cpu_s() - cpu0, 1e-9), "seconds": elapsed,
            "peak_rss_mib": _peak_rss_mib()}


def run_sink(url: str, n: int, lake: str) -> dict[str, Any]:
    from crawl_assets.index.sink import index_documents
    from crawl_assets.resources.elasticsearch import ElasticsearchResource

    client = ElasticsearchResource(hosts=[url]).get_client()
    client.info()
    started, cpu0 = time.perf_counter(), _cpu_s()
    stats = index_documents(client, synthetic_records(n), family="records", tenant="bench", deadletter_root=lake,
                            run_id="bench")
    out = _figures(n, started, cpu0)
    assert stats.created == n and stats.unaccounted == 0, stats
    return {**out, "p50_ms": stats.latency_p50_ms, "p95_ms": stats.latency_p95_ms}


def run_floor(url: str, n: int, lake: str) -> dict[str, Any]:
    """The floor: orjson NDJSON bodies of 500 and ``client.bulk`` in one loop; no routing, versions, accounting.

    It asks for the same trimmed response as the sink (``filter_path``), so it is a strict floor."""
    import orjson

    from crawl_assets.index.sink import BULK_FILTER_PATH

    from crawl_assets.resources.elasticsearch import ElasticsearchResource

    client = ElasticsearchResource(hosts=[url]).get_client()
    client.info()
    client.indices.create(index="floor")
    started, cpu0 = time.perf_counter(), _cpu_s()
    parts: list[bytes] = []
    for doc in synthetic_records(n):
        parts.append(orjson.dumps({"index": {"_index": "floor", "_id": doc["key"]}}))
        parts.append(orjson.dumps(doc))
        if len(parts) == 1000:
            client.bulk(operations=b"\n".join(parts) + b"\n", filter_path=BULK_FILTER_PATH)
            parts = []
    if parts:
        client.bulk(operations=b"\n".join(parts) + b"\n", filter_path=BULK_FILTER_PATH)
    return _figures(n, started, cpu0)


def run_baseline(url: str, n: int, lake: str) -> dict[str, Any]:
    """What both pay before indexing anything: the imports and the input pool."""
    from crawl_assets.index.sink import index_documents  # noqa: F401
    from crawl_assets.resources.elasticsearch import ElasticsearchResource

    ElasticsearchResource(hosts=[url]).get_client().info()
    next(synthetic_records(n))
    return {"docs_per_s": 0.0, "docs_per_cpu_s": 0.0, "seconds": 0.0, "peak_rss_mib": _peak_rss_mib()}


def child(phase: str, n: int) -> dict[str, Any]:
    """One measurement in a fresh process, against a fresh server process."""
    from crawl_assets_tests.es_server import spawn

    with spawn("--no-validate") as url:
        out = subprocess.run([sys.executable, __file__, "--phase", phase, "--url", url, "--docs", str(n)],
                             capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{phase} run failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--phase", choices=["sink", "floor", "baseline"], help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        import tempfile

        with tempfile.TemporaryDirectory() as lake:
            fn = {"sink": run_sink, "floor": run_floor, "baseline": run_baseline}[args.phase]
            print(json.dumps(fn(args.url, args.docs, lake)))
        return

    load_before = os.getloadavg()
    results: dict[str, list[dict[str, Any]]] = {"sink": [], "floor": [], "baseline": [child("baseline", args.docs)]}
    for _ in range(args.runs):
        for phase in ("floor", "sink"):
            results[phase].append(child(phase, args.docs))

    def med(phase: str, key: str) -> float:
        return statistics.median(r[key] for r in results[phase])

    print(f"{args.docs:,} records, median of {args.runs} interleaved runs (test server in its own process)")
    print(f"{'':<34} {'docs/s':>10} {'docs/CPU-s':>11} {'peak RSS':>10}")
    for label, phase in (("BulkSink (index_documents)", "sink"), ("raw NDJSON + client.bulk (floor)", "floor")):
        print(f"{label:<34} {med(phase, 'docs_per_s'):>10,.0f} {med(phase, 'docs_per_cpu_s'):>11,.0f} "
              f"{med(phase, 'peak_rss_mib'):>6.0f} MiB")
    print(f"{'(imports + input pool, no indexing)':<34} {'':>10} {'':>11} {med('baseline', 'peak_rss_mib'):>6.0f} MiB")
    print(f"sink bulk latency p50 {med('sink', 'p50_ms'):.0f} ms, p95 {med('sink', 'p95_ms'):.0f} ms")
    wall = med("floor", "docs_per_s") / med("sink", "docs_per_s")
    cpu = med("floor", "docs_per_cpu_s") / med("sink", "docs_per_cpu_s")
    print(f"floor / sink: {wall:.2f}x wall, {cpu:.2f}x client CPU (target <= 2x); sink target >= 60,000 docs/s")
    print("docs/CPU-s = documents per second of the client process's own CPU time (user + sys): the client-side")
    print("cost, independent of the stand-in server's speed and of other load on the machine.")
    # Added figures: CPU per document, the best of the interleaved runs, every run, and the machine's load.
    print(f"client CPU per document (median): sink {1e6 / med('sink', 'docs_per_cpu_s'):.2f} µs, "
          f"floor {1e6 / med('floor', 'docs_per_cpu_s'):.2f} µs")
    for phase in ("sink", "floor"):
        runs = results[phase]
        print(f"{phase:<5} best of {len(runs)}: {max(r['docs_per_s'] for r in runs):>9,.0f} docs/s "
              f"{max(r['docs_per_cpu_s'] for r in runs):>9,.0f} docs/CPU-s; runs (docs/s, docs/CPU-s): "
              + ", ".join(f"{r['docs_per_s'] / 1000:.1f}k/{r['docs_per_cpu_s'] / 1000:.1f}k" for r in runs))
    load_after = os.getloadavg()
    print(f"load average (1/5/15 min) on {os.cpu_count()} CPUs: before {'/'.join(f'{x:.2f}' for x in load_before)}, "
          f"after {'/'.join(f'{x:.2f}' for x in load_after)}")


if __name__ == "__main__":
    main()
