"""The query API under load, side by side with the same requests a user would otherwise send straight to
Elasticsearch with the official Python client.

    pip install -c constraints.txt -e ".[dev,bench]"
    python bench/api.py [--records 1000000] [--rate R] [--es-share 0.4] [--seconds 60] [--export-rounds 2] [--es-url URL]

1. Index ``--records`` generated records (``api_corpus``: Persian/English text with Zipf word frequencies,
   hashtags, mentions, replies over a year) into a real node (started here, 1 GiB heap, unless ``--es-url``
   is given) with the project's sink, then wait until no segment merge runs (a user queries a settled
   index). An index left by another ``--records`` or another generator is rebuilt.
2. Start ``crawl-assets api serve`` (uvicorn, one worker) with a key made by ``crawl-assets api keys create``.
3. Check that every compared request (``api_requests.variants``: 30 per endpoint: selective searches, 30-day
   aggregation windows, lookups of different keys) answers the same, non-empty, through the API and straight
   from Elasticsearch; stop otherwise (a baseline that produced nothing is no baseline). Then ``--sequential``
   calls per endpoint one at a time, API and direct alternating, each side first half the time (the API's
   own cost without queueing), with the server's and Elasticsearch's CPU per call.
4. The load: locust (headless, ``api_locust.py``, a second process) sends an open-loop schedule: pairs of
   (endpoint by weight, variant), each pair once through the API and once straight to Elasticsearch, slots
   evenly spaced at ``--rate`` per side, the side that goes first alternating. Same requests, same rate,
   same run, one keep-alive connection per side per locust user. Sends later than due are counted (> 1% of
   them late by > 50 ms: the rate was not sustained; the goal is then not met).
   The rate (``--rate``, default: derived, at most 20/s) is one the node sustains without queueing:
   Elasticsearch's CPU per call (step 3, the load's weights) times the rate of both sides is ``--es-share``
   (0.4) of the cores that other work leaves idle (measured over 5 s just before; the machine is shared). The machine's CPU use during the load (busy share; cores used by Elasticsearch, the
   server, locust) and the load average are printed with the figures. Every call's time (request + JSON
   decoding) is recorded; an empty answer is a failure. Prints p50/p95/p99 per endpoint, direct beside API,
   and the goals: the API adds <= 10 ms at p50 and <= 25% at p95.
   What the earlier load measured instead (direct p50 0.6-1 s against 25-260 ms one at a time, machine half
   idle): locust's ``constant_throughput`` counts its pacing from each user's spawn, so the users (spawned
   within a second) fired in phase, one burst per period; and the one search (two of a 12-word vocabulary)
   matched about half of the index, ~300 ms of Elasticsearch CPU. Each request is 12 shard tasks (one
   per monthly index) on a 4-thread search pool: during each burst the pool's queue held up to 96 tasks,
   between bursts it was idle (``_nodes/stats/thread_pool`` sampled every 0.25 s). Young GC: 2 pauses of
   ~70 ms in the minute; no old GC.
5. Exports every live record as JSON lines through the API and with ``elasticsearch.helpers.scan`` (own process,
   same fields): records/s, CPU seconds, peak RSS side by side (interleaved rounds, medians), same count and
   keys asserted. Goal: >= 20k records/s, server RSS <= 200 MiB for 1M records. Then Parquet (API only).
Machine load matters (2 shared cores): the load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from api_exports import compare_exports, cpu_seconds, peer_export  # noqa: E402
from api_corpus import TENANT, generate  # noqa: E402
from api_requests import ALIAS, WEIGHTS, api_answer, direct_answer, non_empty, variants  # noqa: E402

def index_records(es_url: str, n: int, workdir: Path) -> float:
    from crawl_assets.index.client import build_client
    from crawl_assets.index.sink import index_documents

    client = build_client([es_url], request_timeout=120)
    have = client.count(index=ALIAS, ignore_unavailable=True).get("count", 0) if client.indices.exists_alias(name=ALIAS) else 0
    if have == n and same_generator(client, n):
        print(f"index: the {have:,} records are already there")
        settle(client)
        return 0.0
    if have:  # another --records (a key's created_at depends on n) or another generator: start again
        for name in client.indices.get_alias(name=ALIAS).body:
            client.indices.delete(index=name)
        print(f"index: deleted the tenant's {have:,} records of an earlier run")
    began = time.perf_counter()
    stats = index_documents(client, generate(n), family="records", tenant=TENANT, deadletter_root=str(workdir / "lake"))
    client.indices.refresh(index=ALIAS)
    took = time.perf_counter() - began
    print(f"index: {n:,} records in {took:.0f} s ({n / took:,.0f}/s) with the project's sink")
    assert stats.failed == 0, f"{stats.failed} records failed to index"
    settle(client)
    return took


def same_generator(client, n: int) -> bool:
    """The indexed records are this generator's: a few of them, read back, equal what it generates now."""
    probes = {doc["key"]: doc["text"] for i, doc in enumerate(generate(min(n, 1000))) if i % 250 == 7}
    found = client.search(index=ALIAS, size=len(probes), query={"terms": {"key": list(probes)}}, _source=["key", "text"])
    return {h["_source"]["key"]: h["_source"]["text"] for h in found["hits"]["hits"]} == probes


def settle(client, quiet_polls: int = 3, limit: float = 900.0) -> None:
    """Wait until Elasticsearch has no segment merge running (``quiet_polls`` polls in a row, 2 s apart): right
    after a million documents it may still be merging, and queries measured meanwhile would compete with the
    merges for the CPU and the disk (iowait is not counted as busy). A user queries a settled index."""
    began, quiet = time.perf_counter(), 0
    while quiet < quiet_polls and time.perf_counter() - began < limit:
        merges = client.indices.stats(index=ALIAS, metric="merge")["_all"]["total"]["merges"]["current"]
        quiet = quiet + 1 if merges == 0 else 0
        time.sleep(2)
    print(f"index: merges settled after {time.perf_counter() - began:.0f} s (load average {os.getloadavg()[0]:.2f})")


def check_same_answers(api_url: str, key: str, es_url: str, requests: dict[str, list]) -> None:
    from elasticsearch import Elasticsearch

    es = Elasticsearch(es_url, request_timeout=60)
    api = httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=60)
    shown = []
    for name, variants_of in requests.items():
        sizes = []
        for path, params, body in variants_of:
            mine = api_answer(name, api.get(api_url + path, params=params).raise_for_status().json())
            theirs = direct_answer(name, es.search(index=ALIAS, ignore_unavailable=True, **body).body)
            assert non_empty(name, theirs), f"{name} {params}: Elasticsearch answered nothing: no baseline"
            assert mine == theirs, f"{name} {params}: the API answered {mine[:5]}..., Elasticsearch {theirs[:5]}..."
            sizes.append(sum(mine) if name == "timeline" else len(mine))
        shown.append(f"{name} {len(variants_of)} variants ({min(sizes):,}-{max(sizes):,} "
                     f"{'records' if name == 'timeline' else 'items'})")
    totals = [es.search(index=ALIAS, size=0, track_total_hits=True, query=body["query"])["hits"]["total"]["value"]
              for _, _, body in requests["search"]]
    api.close()
    es.close()
    print("same non-empty answers through the API and straight from Elasticsearch: " + ", ".join(shown))
    print(f"the searches match {min(totals):,}-{max(totals):,} records (median {statistics.median(totals):,.0f})")


def sequential_latency(api_url: str, key: str, es_url: str, requests: dict[str, list], calls: int, server_pid: int,
                       es_pid: int | None) -> dict[str, float]:
    """``calls`` calls per endpoint (its variants in turn), one at a time, API and direct alternating, each side
    first every other time (the second of a pair finds Elasticsearch's caches warmed by the first: always
    putting the API first charged it that warm-up). The API's own cost without queueing. Returns
    Elasticsearch's CPU ms per call of each endpoint (both sides' calls), from which the load's rate is
    derived."""
    from elasticsearch import Elasticsearch

    es = Elasticsearch(es_url, request_timeout=60)
    api = httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=60)
    print(f"\none call at a time ({calls} per endpoint and side, alternating, each side first half the time; ms, "
          f"call + JSON decoding; load average {os.getloadavg()[0]:.2f}):")
    print("(server CPU: the API process's CPU time per API call; ES CPU: Elasticsearch's per call, either side)")
    print(f"{'endpoint':<14} | {'direct p50':>10}{'p95':>8} | {'API p50':>8}{'p95':>8} | {'+p50 ms':>8} | "
          f"{'server CPU ms':>13} | {'ES CPU ms':>9}")
    es_ms: dict[str, float] = {}
    for name, variants_of in requests.items():
        times: dict[str, list[float]] = {"api": [], "direct": []}
        cpu, es_cpu = cpu_seconds(server_pid), cpu_seconds(es_pid)
        for i in range(calls):
            path, params, body = variants_of[i % len(variants_of)]
            calls_of = {"api": lambda: api_answer(name, api.get(api_url + path, params=params).raise_for_status().json()),
                        "direct": lambda: direct_answer(name, es.search(index=ALIAS, ignore_unavailable=True, **body).body)}
            for side in ("api", "direct") if i % 2 == 0 else ("direct", "api"):
                began = time.perf_counter()
                assert non_empty(name, calls_of[side]())
                times[side].append((time.perf_counter() - began) * 1000)
        a, d = times["api"], times["direct"]
        per_call = (cpu_seconds(server_pid) - cpu) * 1000 / calls
        es_ms[name] = (cpu_seconds(es_pid) - es_cpu) * 1000 / (2 * calls)
        print(f"{name:<14} | {pct(d, 50):>10.1f}{pct(d, 95):>8.1f} | {pct(a, 50):>8.1f}{pct(a, 95):>8.1f} | "
              f"{pct(a, 50) - pct(d, 50):>8.1f} | {per_call:>13.2f} | {es_ms[name]:>9.1f}")
    api.close()
    es.close()
    return es_ms


def sustainable_rate(es_ms: dict[str, float], share: float = 0.4, cores: float | None = None) -> float:
    """Requests per second per side whose Elasticsearch CPU (both sides, the load's weights) takes ``share`` of
    the cores: above it, both paths queue for the CPU and the comparison measures the queue."""
    per_call = sum(es_ms[n] * w for n, w in WEIGHTS.items()) / sum(WEIGHTS.values()) / 1000
    return share * (cores or os.cpu_count() or 1) / (2 * per_call) if per_call > 0 else float("inf")


def idle_cores(seconds: float = 5.0) -> float:
    """The cores other work leaves free now (the machine is shared): all of them times the idle share over
    ``seconds``, at least a quarter of one."""
    return max(0.25, (os.cpu_count() or 1) * (1 - psutil.cpu_percent(interval=seconds) / 100))


def load_plan(requests: dict[str, list], rate: float, seconds: int, seed: int = 9) -> dict:
    """The load's pairs (endpoint by weight, then one of its variants), the gap between slots (two slots per
    pair: API and direct) and the number of locust users (each owns every ``users``-th slot, >= 2 s apart)."""
    rng = random.Random(seed)
    names = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()), k=max(1, round(rate * seconds)))
    gap = 1 / (2 * rate)
    return {"requests": requests, "pairs": [[n, rng.randrange(len(requests[n]))] for n in names], "gap": gap,
            "users": max(8, math.ceil(2.0 / gap))}


def run_load(api_url: str, es_url: str, key: str, plan: dict, workdir: Path, pids: dict[str, int | None]) -> dict:
    """The locust run; with its timings, the machine's CPU use during it: busy share of all cores and the CPU
    seconds of Elasticsearch, the API server and locust (the rest is other work on the machine)."""
    timings, plan_file = workdir / "timings.json", workdir / "plan.json"
    plan_file.write_text(json.dumps(plan))
    env = {**os.environ, "BENCH_KEY": key, "BENCH_API": api_url, "BENCH_ES": es_url, "BENCH_PLAN": str(plan_file),
           "BENCH_TIMINGS": str(timings), "PYTHONPATH": str(REPO)}
    seconds = len(plan["pairs"]) * 2 * plan["gap"]
    users = plan["users"]
    cmd = [sys.executable, "-m", "locust", "-f", str(REPO / "bench" / "api_locust.py"), "--headless",
           "-u", str(users), "-r", str(users * 5), "-t", f"{math.ceil(seconds) + 60}s", "--only-summary",
           "--loglevel", "WARNING"]
    machine, procs = psutil.cpu_times(), {name: cpu_seconds(pid) for name, pid in pids.items()}
    children, began = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(cmd, env=env, check=False, capture_output=True, text=True, timeout=seconds + 180)
    wall = time.perf_counter() - began
    after, later = psutil.cpu_times(), resource.getrusage(resource.RUSAGE_CHILDREN)
    if not timings.exists():
        raise SystemExit(f"locust wrote no timings (exit {done.returncode}): {done.stderr[-2000:]}")
    idle = (after.idle + getattr(after, "iowait", 0)) - (machine.idle + getattr(machine, "iowait", 0))
    total = sum(after) - sum(machine)
    cores = {name: (cpu_seconds(pid) - procs[name]) / wall for name, pid in pids.items()}
    cores["locust"] = (later.ru_utime + later.ru_stime - children.ru_utime - children.ru_stime) / wall
    return {**json.loads(timings.read_text()), "busy": 1 - idle / total if total else float("nan"), "cores": cores}


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def print_load(result: dict, args: argparse.Namespace, load: tuple) -> bool:
    rows, failures = result["times"], result["failures"]
    cores = ", ".join(f"{name} {used:.2f}" for name, used in result["cores"].items())
    print(f"\nmixed load: {args.rate:.3g} req/s through the API and {args.rate:.3g} req/s straight to Elasticsearch "
          f"(official client) for {args.seconds} s over {args.records:,} records; load average {load[0]:.2f} before, "
          f"{load[1]:.2f} after. Machine CPU busy {result['busy']:.0%} of {os.cpu_count()} cores during the load "
          f"(cores used: {cores}; the rest: other work on the machine). Milliseconds, call + JSON decoding.")
    late = result["late"]
    sent_late = sum(1 for ms in late if ms > 50)
    print(f"  sends: {len(late):,} of {result['slots']:,} slots; late by more than 50 ms: {sent_late} "
          f"(p99 lateness {pct(late, 99):.1f} ms){'' if sent_late <= len(late) / 100 else ': the rate was not sustained'}")
    if result["busy"] > 0.85:
        print("  the CPU was saturated (busy > 85%): both paths queued for it, and the API path has more processes "
              "to schedule (uvicorn, then Elasticsearch): the figures below measure the queue as much as the API")
    print(f"{'endpoint':<14}{'calls':>7}{'fail':>6} | {'direct p50':>10}{'p95':>8}{'p99':>8} | {'API p50':>8}{'p95':>8}"
          f"{'p99':>8} | {'+p50 ms':>8}{'+p95 ms':>8}{'+p95 %':>8}")
    verdicts = []
    for name in WEIGHTS:
        api, direct = rows.get(f"api {name}", []), rows.get(f"direct {name}", [])
        fails = failures.get(f"api {name}", 0) + failures.get(f"direct {name}", 0)
        if len(api) < 2 or len(direct) < 2:
            print(f"{name}: too few successful calls to compare (API {len(api)}, direct {len(direct)}, failures {fails})")
            verdicts.append(False)
            continue
        a = {q: pct(api, q) for q in (50, 95, 99)}
        d = {q: pct(direct, q) for q in (50, 95, 99)}
        plus50, plus95 = a[50] - d[50], (a[95] / d[95] - 1) * 100
        print(f"{name:<14}{len(api):>7}{fails:>6} | {d[50]:>10.1f}{d[95]:>8.1f}{d[99]:>8.1f} | "
              f"{a[50]:>8.1f}{a[95]:>8.1f}{a[99]:>8.1f} | {plus50:>8.1f}{a[95] - d[95]:>8.1f}{plus95:>8.0f}")
        verdicts.append(plus50 <= 10 and plus95 <= 25 and fails == 0)
    met = all(verdicts) and sent_late <= len(late) / 100 and len(late) == result["slots"]
    print("goal: the API adds <= 10 ms at p50 and <= 25% at p95, no failure: " + ("MET" if met else "NOT MET"))
    return met


def listening_pid(url: str) -> int | None:
    """The process listening on ``url``'s port on this machine (for its CPU time), if it can be seen."""
    port = httpx.URL(url).port
    try:
        return next((c.pid for c in psutil.net_connections("tcp") if c.laddr and c.laddr.port == port
                     and c.status == psutil.CONN_LISTEN and c.pid), None)
    except psutil.AccessDenied:
        return None


def start_server(es_url: str, workdir: Path) -> tuple[subprocess.Popen, str, str]:
    env = {**os.environ, "DAGSTER_HOME": str(workdir / "home"), "CRAWL_ES_URL": es_url}
    (workdir / "home").mkdir(exist_ok=True)
    env.pop("DAGSTER_PG_URL", None)
    key = subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", "api", "keys", "create", "--tenant", TENANT,
                          "--name", "bench", "--rate", "100000"], env=env, capture_output=True, text=True,
                         check=True, cwd=REPO).stdout.strip().split()[-1]
    from crawl_assets_tests.es_node.node import free_port

    port = free_port()
    api_url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "crawl_assets.cli.main", "api", "serve", "--port", str(port),
                               "--rate", "100000"], env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                              stderr=open(workdir / "server.log", "wb"))
    for _ in range(300):
        try:
            if httpx.get(f"{api_url}/healthz", timeout=1).status_code == 200:
                return server, api_url, key
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.terminate()
    raise SystemExit(f"the API did not come up: {(workdir / 'server.log').read_text()[-2000:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rate", type=float, default=0.0, help="requests per second per side (API, direct); "
                        "0: the rate whose Elasticsearch CPU takes --es-share of the cores (one-at-a-time phase)")
    parser.add_argument("--es-share", type=float, default=0.4, help="share of the cores the derived rate gives "
                        "Elasticsearch (both sides together)")
    parser.add_argument("--sequential", type=int, default=30, help="calls per endpoint one at a time (at least 5)")
    parser.add_argument("--seconds", type=int, default=60, help="length of the load (0: no load)")
    parser.add_argument("--es-url", default=os.environ.get("CRAWL_TEST_ES_URL", ""))
    parser.add_argument("--export-rounds", type=int, default=2, help="interleaved export rounds per side (0: none)")
    parser.add_argument("--peer-export", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer_export:
        peer_export(args.es_url)
        return 0
    workdir = Path(tempfile.mkdtemp(prefix="bench_api_"))
    node = None
    if not args.es_url:
        from crawl_assets_tests.es_node.node import RealNode

        node = RealNode(heap="1g").start()
        args.es_url = node.url
    es_pid = node._server_pid() if node else listening_pid(args.es_url)  # noqa: SLF001 - for its CPU time
    server = None
    try:
        index_records(args.es_url, args.records, workdir)
        server, api_url, key = start_server(args.es_url, workdir)
        requests = variants(args.records)
        check_same_answers(api_url, key, args.es_url, requests)
        print(f"API server RSS after the check, before any load: {psutil.Process(server.pid).memory_info().rss / 2**20:,.0f} MiB")
        load_ok = export_ok = True
        es_ms = sequential_latency(api_url, key, args.es_url, requests, max(args.sequential, 5), server.pid, es_pid)
        if not args.rate:
            free = idle_cores()
            args.rate = round(min(20.0, sustainable_rate(es_ms, args.es_share, free)), 1) if es_pid else 5.0
            print(f"load rate: {args.rate:g} req/s per side (Elasticsearch's CPU per call above, the load's weights: "
                  f"{args.es_share:.0%} of the {free:.2f} cores other work left idle over 5 s, both sides together; "
                  "at most 20)")
        if args.seconds:
            before = os.getloadavg()[0]
            result = run_load(api_url, args.es_url, key, load_plan(requests, args.rate, args.seconds), workdir,
                              {"Elasticsearch": es_pid, "API server": server.pid})
            load_ok = print_load(result, args, (before, os.getloadavg()[0]))
            for error in result["errors"]:
                print("  failure:", error)
        if args.export_rounds:
            export_ok = compare_exports(api_url, key, server.pid, args.es_url, es_pid, args.export_rounds)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        if node is not None:
            node.stop()
    return 0 if load_ok and export_ok else 1


if __name__ == "__main__":
    sys.exit(main())
