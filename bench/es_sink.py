"""Bench: our bulk sink vs ``helpers.streaming_bulk`` and ``helpers.parallel_bulk`` on a real Elasticsearch node.

Every contender indexes the same records with the same actions: into the record's month index, with
``_id`` = the record key and the external version of the observation (``version_type=external_gte``),
so the node does the same work for each. The helpers run with their default settings and the default
client (what a user would write); the sink with its defaults through our resource's client. The floor,
``parallel_bulk`` matched, is the helper configured like the sink (same actions, 4 requests in flight,
500 documents or 3 MiB per request, the orjson serializer): the sink's accounting, dead letters and
retries cost what separates the two.

Each measurement runs in a fresh child process (its CPU time and peak RSS are the client's own) into a
fresh tenant whose month indices exist beforehand (so no contender pays index creation); runs are
interleaved, medians printed, and the indexed count checked against the input after every run.

Beside them: the sink into template 2's mapping (the mapping before issue 32: node CPU per record), and the
replay ceiling: after each sink run, its documents read back from the node and replayed by plain bulk requests
(8 MiB bodies, the best of 2, 3 and 4 in flight, the families one after the other or interleaved, refresh off; ``bench/replay.py``). The node's CPU per document is its process's.

    python bench/es_sink.py --target real [--docs 100000] [--runs 3] [--heap 1g]   # starts a local node
    python bench/es_sink.py --url http://host:9200 ...                              # an existing cluster
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
from peak import peak_rss_mib  # noqa: E402  (bench/peak.py)

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
PHASES = ("streaming_bulk", "parallel_bulk", "parallel_bulk_matched", "sink", "sink_template_2")
TEMPLATE_2 = REPO / "crawl_assets_tests" / "index" / "templates" / "records_v2.json"  # the mapping before issue 32
MONTHS = [f"2025.{m:02d}" for m in range(1, 13)]


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
    costs ~1 µs per record and no contender is measuring the bench's own generator."""
    prepared = [_record(i, tenant) for i in range(min(pool, n))]
    for i in range(n):
        doc = dict(prepared[i % pool])
        doc["key"] = doc["conversation_id"] = f"x:{1_700_000_000_000_000_000 + i}"
        yield doc


def helper_actions(n: int, tenant: str) -> Iterator[dict[str, Any]]:
    """The sink's writes as helper actions: month index, ``_id``, external version."""
    from crawl_assets.index.naming import index_for, observation_version

    for doc in synthetic_records(n, tenant):
        yield {"_index": index_for("records", tenant, doc["created_at"]), "_id": doc["key"],
               "version": observation_version(doc), "version_type": "external_gte", "_source": doc}


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _measure(fn, n: int) -> dict[str, Any]:
    started, cpu0 = time.perf_counter(), _cpu_s()
    indexed = fn()
    elapsed, cpu = time.perf_counter() - started, _cpu_s() - cpu0
    if indexed != n:
        raise SystemExit(f"only {indexed} of {n} documents were indexed")
    return {"docs_per_s": n / elapsed, "cpu_us_per_doc": 1e6 * cpu / n, "seconds": elapsed,
            "peak_rss_mib": peak_rss_mib()}


def run_phase(phase: str, url: str, n: int, tenant: str) -> dict[str, Any]:
    from elasticsearch import Elasticsearch, helpers

    if phase in ("sink", "sink_template_2"):
        import tempfile

        from crawl_assets.index.sink import index_documents
        from crawl_assets.orchestration.resources import ElasticsearchResource

        client = ElasticsearchResource(hosts=[url], request_timeout=120).get_client()
        client.cluster.health()

        def go() -> int:
            with tempfile.TemporaryDirectory() as lake:
                stats = index_documents(client, synthetic_records(n, tenant), family="records", tenant=tenant,
                                        deadletter_root=lake, run_id="bench")
            assert stats.unaccounted == 0 and stats.failed == 0, stats
            return stats.created
    elif phase == "parallel_bulk_matched":
        from elasticsearch.serializer import OrjsonSerializer

        from crawl_assets.index.sink import MiB

        client = Elasticsearch(url, request_timeout=120, serializer=OrjsonSerializer())
        client.cluster.health()

        def go() -> int:
            actions = helper_actions(n, tenant)
            return sum(1 for ok, _ in helpers.parallel_bulk(client, actions, thread_count=4, queue_size=4,
                                                            chunk_size=500, max_chunk_bytes=3 * MiB) if ok)
    else:
        client = Elasticsearch(url, request_timeout=120)  # the default client, as a user writes it
        client.cluster.health()
        bulk = helpers.streaming_bulk if phase == "streaming_bulk" else helpers.parallel_bulk

        def go() -> int:
            return sum(1 for ok, _ in bulk(client, helper_actions(n, tenant)) if ok)
    return _measure(go, n)


def prepare_tenant(client, tenant: str, template_2: bool = False) -> None:
    """The tenant's month indices, from the shipped template (or with template 2's settings and mappings)."""
    from crawl_assets.index.indices import ensure_index, ensure_template
    from crawl_assets.index.naming import index_name, read_alias

    ensure_template(client, "records")
    for month in MONTHS:
        name = index_name("records", tenant, month)
        if template_2:
            body = json.loads(TEMPLATE_2.read_text("utf-8"))["template"]
            client.indices.create(index=name, settings=body["settings"], mappings=body["mappings"],
                                  aliases={read_alias("records", tenant): {}})
        else:
            ensure_index(client, name, "records", tenant)


def drop_tenant(client, tenant: str, n: int) -> None:
    from crawl_assets.index.indices import tenant_indices
    from crawl_assets.index.naming import read_alias

    client.indices.refresh(index=read_alias("records", tenant))
    count = client.count(index=read_alias("records", tenant))["count"]
    if count != n:
        raise SystemExit(f"{tenant}: {count} documents in the index, {n} given")
    client.indices.delete(index=",".join(tenant_indices(client, "records", tenant)))


def child(phase: str, url: str, n: int, tenant: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--phase", phase, "--url", url, "--docs", str(n),
                          "--tenant", tenant], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{phase} run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(results: dict[str, list[dict[str, Any]]], docs: int, runs: int, where: str) -> None:
    def med(phase: str, key: str) -> float:
        return statistics.median(r[key] for r in results[phase])

    print(f"{docs:,} records, median of {runs} interleaved runs per contender, on {where}")
    print(f"{'':<42} {'docs/s':>9} {'client CPU/doc':>15} {'peak RSS':>9} {'node CPU/doc':>13}")
    labels = {"sink": "BulkSink (index_documents), defaults", "parallel_bulk": "helpers.parallel_bulk, defaults",
              "streaming_bulk": "helpers.streaming_bulk, defaults",
              "parallel_bulk_matched": "floor: parallel_bulk matched to sink",
              "sink_template_2": "BulkSink into template 2's mapping",
              "ceiling": "ceiling: the sink's documents replayed"}
    for phase in ("sink", "ceiling", "sink_template_2", "parallel_bulk_matched", "parallel_bulk", "streaming_bulk"):
        if not results.get(phase):
            continue
        client_cpu = f"{med(phase, 'cpu_us_per_doc'):>12.1f} µs" if phase != "ceiling" else f"{'-':>15}"
        rss = f"{med(phase, 'peak_rss_mib'):>5.0f} MiB" if phase != "ceiling" else f"{'-':>9}"
        print(f"{labels[phase]:<42} {med(phase, 'docs_per_s'):>9,.0f} {client_cpu} {rss} "
              f"{med(phase, 'node_cpu_us_per_doc'):>10.0f} µs")
    if results.get("ceiling"):
        ratio = med("sink", "docs_per_s") / med("ceiling", "docs_per_s")
        print(f"sink vs the replay ceiling (its own documents read back, 8 MiB bodies, best of 2-4 in flight and two orders, refresh off): "
              f"{ratio:.2f}x docs/s (goal >= 0.85x)")
    if results.get("sink_template_2"):
        cut = 1 - med("sink", "node_cpu_us_per_doc") / med("sink_template_2", "node_cpu_us_per_doc")
        print(f"node CPU per record, template 3 vs template 2: {-cut:+.0%} (goal <= -30%); docs/s "
              f"{med('sink', 'docs_per_s') / med('sink_template_2', 'docs_per_s'):.2f}x")
    for peer, goal in (("streaming_bulk", 1.5), ("parallel_bulk", 1.0)):
        if not results.get(peer):
            continue
        wall = med("sink", "docs_per_s") / med(peer, "docs_per_s")
        cpu = med(peer, "cpu_us_per_doc") / med("sink", "cpu_us_per_doc")
        print(f"sink vs {peer}: {wall:.2f}x docs/s (goal >= {goal}x), {cpu:.2f}x less client CPU per document")
    if results.get("parallel_bulk_matched"):
        floor = med("sink", "docs_per_s") / med("parallel_bulk_matched", "docs_per_s")
        print(f"sink vs the matched floor (same actions, concurrency, request size, serializer): {floor:.2f}x docs/s")
    for phase in [p for p in (*PHASES, "ceiling") if results.get(p)]:
        print(f"  {phase:<22} runs (docs/s, µs CPU/doc): "
              + ", ".join(f"{r['docs_per_s'] / 1000:.1f}k/{r.get('cpu_us_per_doc', 0):.0f}" for r in results[phase]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=["real"], default="real", help="real: start a local real node")
    parser.add_argument("--url", help="an existing cluster instead of a local node (crawl-bench-* tenants)")
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--heap", default="1g", help="heap of the local node")
    parser.add_argument("--phases", default=",".join(PHASES), help="contenders to run (comma-separated; the "
                        "ceiling is measured after each sink run)")
    parser.add_argument("--phase", choices=PHASES, help=argparse.SUPPRESS)
    parser.add_argument("--tenant", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(run_phase(args.phase, args.url, args.docs, args.tenant)))
        return

    from elasticsearch import Elasticsearch

    from crawl_assets.index.naming import read_alias
    from crawl_assets_tests.es_node.node import RealNode
    from replay import best_replay, node_cpu_seconds, read_back  # bench/replay.py

    node = None if args.url else RealNode(heap=args.heap).start()
    url = args.url or node.url  # type: ignore[union-attr]
    try:
        client = Elasticsearch(url, request_timeout=120)
        # Warm the node up (JIT, caches) so the first contender measured is not the one paying for it.
        prepare_tenant(client, "bench-warmup")
        child("sink", url, min(args.docs, 20_000), "bench-warmup")
        drop_tenant(client, "bench-warmup", min(args.docs, 20_000))
        load_before = os.getloadavg()
        phases = tuple(p for p in args.phases.split(",") if p in PHASES)
        results: dict[str, list[dict[str, Any]]] = {p: [] for p in (*phases, "ceiling")}
        for run in range(args.runs):
            for phase in phases[run % len(phases):] + phases[:run % len(phases)]:  # each contender goes first in turn
                tenant = f"bench-{phase.replace('_', '-')}-{run}"
                prepare_tenant(client, tenant, template_2=phase == "sink_template_2")
                cpu = node_cpu_seconds(client)
                results[phase].append(child(phase, url, args.docs, tenant))
                results[phase][-1]["node_cpu_us_per_doc"] = 1e6 * (node_cpu_seconds(client) - cpu) / args.docs
                if phase == "sink":
                    client.indices.refresh(index=read_alias("records", tenant))
                    lines = read_back(client, tenant, f"ceiling-{run}")
                    got = best_replay(client, lines, f"ceiling-{run}", body_mib=8)
                    results["ceiling"].append({"docs_per_s": got.docs_per_s,
                                               "node_cpu_us_per_doc": 1e6 * got.node_cpu_s / got.docs})
                    print(f"run {run}: sink {results['sink'][-1]['docs_per_s']:,.0f} docs/s, ceiling {got.tried}",
                          flush=True)
                drop_tenant(client, tenant, args.docs)
        where = f"a real Elasticsearch node ({url}{', local, heap ' + args.heap if node else ''})"
        report(results, args.docs, args.runs, where)
        load_after = os.getloadavg()
        print(f"load average (1/5/15 min) on {os.cpu_count()} CPUs: before {'/'.join(f'{x:.2f}' for x in load_before)}, "
              f"after {'/'.join(f'{x:.2f}' for x in load_after)}")
    finally:
        if node is not None:
            node.stop()


if __name__ == "__main__":
    main()
