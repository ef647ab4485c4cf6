"""Bench: 10,000 X sources on the local v2 stand-in, through the scheduler's code paths.

Prints:
  1. registry → partitions: the registry sensor's evaluation (cold: no registry cache; warm) plus the
     bulk partition add, as the daemon applies it;
  2. scheduler tick: the ``x_scheduler`` sensor's evaluation over its slice (default window and the
     whole registry), with health and in-flight runs read from the instance;
  3. sustained source-syncs/s: the sources the ticks request, synced by ``x_sync_batch_no_index`` runs
     executed in ``--workers`` parallel processes (the run workers a daemon would launch), each
     source going raw → normalized_records → relation_edges with its checkpoint, health and metadata
     in the instance. First syncs (timelines fetched from scratch), the scheduler's next round (mostly other
     sources' first syncs: it prefers never-synced ones; the overlap is printed) and incremental re-syncs
     of the same sources (nothing new) are timed and labelled apart. The index step is left out (measured by bench/es_sink.py).

Storage: a fresh Postgres database when ``--pg`` (or CRAWL_BENCH_PG_URL) names a server, else SQLite.

    python bench/scale.py [--sources 10000] [--sync 2000] [--workers 2] [--pg postgresql+psycopg2://postgres@127.0.0.1:5432/postgres]

Workers side by side (``--workers 1,2``): for each count, a fresh database on the shared Postgres server
(``--pg`` is required) and a fresh lake; the same ``--sync`` sources are split into batches of ``--batch``
that ``N`` worker processes (each its own Dagster instance on the shared database, as pods of a run
launcher) take as they become free; first syncs, then incremental re-syncs of the same sources (nothing
new at the stand-in). Printed: source-syncs/s per count, per worker, and the ratio to the first count;
``--repeat R`` alternates the counts R times and prints medians (a shared machine's load drifts). The load
average is printed with each round: on a machine shared with other work the ratio says how much CPU the
other jobs left idle as much as how the workers scale.

    python bench/scale.py --sources 2000 --sync 2000 --workers 1,2 --batch 100 --repeat 2 --pg postgresql+psycopg2://postgres@127.0.0.1:5432/postgres
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def write_registry(path: Path, n: int, accounts: list[str], only: set[int] | None = None) -> None:
    """``n`` X sources ``s00000``...; ``only``: keep just these numbers (same names and accounts)."""
    lines = ["sources:"]
    for i in range(n):
        if only is not None and i not in only:
            continue
        lines += [f"  - name: s{i:05d}", "    tenant: bench", "    platform: x", "    kind: account_timeline",
                  f"    identifier: {accounts[i % len(accounts)]}", "    policy: {interval_minutes: 60}",
                  "    options: {max_results: 100}"]
    path.write_text("\n".join(lines) + "\n")


_WORKER: dict[str, object] = {}


def _sync_batch(keys: list[str]) -> tuple[int, float]:
    """One batch run in this worker process (a run worker's job): (sources synced, seconds)."""
    import dagster as dg

    from crawl_assets.definitions import build_definitions

    if not _WORKER:  # one instance and job per worker process, kept open between batches
        _WORKER["instance"] = dg.DagsterInstance.get()
        _WORKER["job"] = build_definitions().resolve_job_def("x_sync_batch_no_index")
    job, instance = _WORKER["job"], _WORKER["instance"]
    started = time.perf_counter()
    result = job.execute_in_process(  # type: ignore[attr-defined]
        run_config={"ops": {"x_sync_sources_no_index": {"config": {"partitions": keys}}}},
        instance=instance, raise_on_error=False, tags={"crawl/platform": "x"})
    synced = len(keys)
    if not result.success:  # count what the batch synced (its failure says), not what it was given
        synced = 0
        for event in result.all_events:
            data = event.step_failure_data.user_failure_data if event.is_step_failure else None
            if data is not None and "synced" in data.metadata:
                synced = int(data.metadata["synced"].value)
        print(f"  warning: a batch of {len(keys)} had failures; {synced} synced", flush=True)
    return synced, time.perf_counter() - started


def _warm(_: int) -> int:
    """Import Dagster and build the definitions once per worker (a run worker pays this per run)."""
    _sync_batch([])
    return os.getpid()


def tick(defs, instance, cursor: str | None = None):
    import dagster as dg

    from crawl_assets.orchestration.resources import RegistryResource

    sensor = defs.get_repository_def().get_sensor_def("x_scheduler")
    context = dg.build_sensor_context(instance_ref=instance.get_ref(), definitions=defs, cursor=cursor,
                                      resources={"registry": RegistryResource()})
    started = time.perf_counter()
    result = sensor.evaluate_tick(context)
    return result, time.perf_counter() - started


def make_due_again(instance, n: int) -> None:
    """Move every synced source's last success two hours back, as if its 60-minute interval had passed."""
    from dataclasses import replace

    from crawl_assets.orchestration.monitoring.health import load_health, save_health

    health = load_health(instance, [f"bench.x.s{i:05d}" for i in range(n)])
    save_health(instance, {k: replace(h, last_success=h.last_success - 7200) for k, h in health.items() if h.last_success})


def batches_of(result) -> list[list[str]]:
    return [r.run_config["ops"]["x_sync_sources_no_index"]["config"]["partitions"]
            for r in result.run_requests if r.job_name == "x_sync_batch_no_index"]


def sync_round(defs, instance, workers: int, target: int, pool: ProcessPoolExecutor) -> tuple[set[str], float, list[float]]:
    """Ticks request batches; workers run them; until ``target`` sources were synced. Returns
    (the partition keys synced, wall seconds, tick seconds)."""
    done, ticks, cursor, keys = 0, [], None, set()
    started = time.perf_counter()
    while done < target:
        result, took = tick(defs, instance, cursor)
        ticks.append(took)
        cursor = result.cursor
        batches = [b for b in batches_of(result)]
        if not batches:
            break
        budget = target - done
        trimmed = []
        for b in batches:
            if budget <= 0:
                break
            trimmed.append(b[:budget])
            budget -= len(trimmed[-1])
        for batch in trimmed:
            keys.update(batch)
        for n, _ in pool.map(_sync_batch, trimmed):
            done += n
    return keys, time.perf_counter() - started, ticks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", type=int, default=10_000)
    ap.add_argument("--sync", type=int, default=300, help="sources to sync in the first-sync round")
    ap.add_argument("--workers", type=lambda v: [int(n) for n in v.split(",")], default=[2],
                    help="parallel run workers; several (1,2) compare them side by side on the same sources")
    ap.add_argument("--batch", type=int, default=250, help="largest batch (CRAWL_SCHEDULER_MAX_BATCH)")
    ap.add_argument("--repeat", type=int, default=1, help="with several --workers: alternate the counts this many "
                    "times and print the medians (a shared machine's load drifts between rounds)")
    ap.add_argument("--pg", default=os.environ.get("CRAWL_BENCH_PG_URL", ""), help="Postgres server URL (a fresh database is made)")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="crawl_scale_"))
    home = tmp / "home"
    home.mkdir()
    shutil.copyfile(REPO / "dagster.yaml", home / "dagster.yaml")
    os.environ.update({"DAGSTER_HOME": str(home), "CRAWL_LAKE": str(tmp / "lake"),
                       "CRAWL_REGISTRY": str(tmp / "sources.yaml"), "CRAWL_X_BEARER_TOKEN__BENCH": "test-token",
                       "CRAWL_SCHEDULER_MAX_RUNS": str(max(args.workers)), "CRAWL_SCHEDULER_MAX_BATCH": str(args.batch)})
    os.environ.pop("CRAWL_ES_URL", None)
    if len(args.workers) > 1:
        if not args.pg:
            raise SystemExit("--workers with several counts compares workers on a shared Postgres server: give --pg")
        try:
            return compare_main(args, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    drop = None
    if args.pg:
        os.environ["DAGSTER_PG_URL"], drop = fresh_database(args.pg)
    storage = "Postgres" if args.pg else "SQLite"

    from crawl_assets_tests.standins.x_api import XAPIServer
    from crawl_assets_tests.standins.x_corpus import build_corpus

    corpus = build_corpus(600, days=10, n_users=8)
    accounts = [u["username"] for u in corpus.users.values() if u["username"] != "outsider"]
    try:
        with XAPIServer(corpus, rate_limit=10**9) as server:
            os.environ["CRAWL_X_BASE_URL"] = server.url
            write_registry(Path(os.environ["CRAWL_REGISTRY"]), args.sources, accounts)
            run(args, storage, tmp, accounts)
    finally:
        if drop is not None:
            drop()
        shutil.rmtree(tmp, ignore_errors=True)


def fresh_database(server: str) -> "tuple[str, Callable[[], None]]":
    """A new database on ``server``; (its URL, a function that drops it)."""
    import sqlalchemy as sa

    name = f"crawl_bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(sa.text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n "
                                 "AND pid <> pg_backend_pid()"), {"n": name})
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()

    return server.rsplit("/", 1)[0] + f"/{name}", drop


def timed_round(pool: ProcessPoolExecutor, batches: list[list[str]]) -> tuple[int, float, float]:
    """(sources synced, wall seconds, summed seconds inside the runs) of the batches on the pool's workers."""
    started = time.perf_counter()
    results = list(pool.map(_sync_batch, batches))
    return sum(n for n, _ in results), time.perf_counter() - started, sum(t for _, t in results)


def compare_main(args, tmp: Path) -> None:
    """The same sources synced by each worker count in turn, each on a fresh database and lake; one table."""
    import multiprocessing

    import dagster as dg

    from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
    from crawl_assets_tests.standins.x_api import XAPIServer
    from crawl_assets_tests.standins.x_corpus import build_corpus

    corpus = build_corpus(600, days=10, n_users=8)
    accounts = [u["username"] for u in corpus.users.values() if u["username"] != "outsider"]
    keys = [f"bench.x.s{i:05d}" for i in range(args.sync)]
    batches = [keys[i:i + args.batch] for i in range(0, len(keys), args.batch)]
    rows = []
    print(f"{args.sync} X sources in {len(batches)} batches of up to {args.batch}; shared Postgres; "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}", flush=True)
    with XAPIServer(corpus, rate_limit=10**9) as server:
        os.environ["CRAWL_X_BASE_URL"] = server.url
        write_registry(Path(os.environ["CRAWL_REGISTRY"]), args.sync, accounts)
        for n in [n for _ in range(args.repeat) for n in args.workers]:
            url, drop = fresh_database(args.pg)
            os.environ.update({"DAGSTER_PG_URL": url, "CRAWL_LAKE": str(tmp / f"lake-{n}")})
            try:
                with dg.DagsterInstance.get() as instance:
                    instance.add_dynamic_partitions(SOURCE_PARTITIONS["x"].name, keys)
                # spawn: each worker starts clean, as a pod does (no state inherited from this process)
                with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn")) as pool:
                    list(pool.map(_warm, range(n)))
                    first = timed_round(pool, batches)
                    again = timed_round(pool, batches)
                rows.append((n, first, again))
                print(f"  {n} worker(s): first syncs {first[0] / first[1]:.1f}/s, re-syncs {again[0] / again[1]:.1f}/s "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
            finally:
                drop()
    import statistics

    medians = {n: (statistics.median(f[0] / f[1] for m, f, _ in rows if m == n),
                   statistics.median(a[0] / a[1] for m, _, a in rows if m == n)) for n in args.workers}
    base_first, base_again = medians[args.workers[0]]
    print(f"\n{'workers':>7} | {'first syncs/s':>13} | {'per worker':>10} | {'ratio':>5} | {'re-syncs/s':>10} | "
          f"{'per worker':>10} | {'ratio':>5}   (medians of {args.repeat})")
    for n, (f_rate, a_rate) in medians.items():
        print(f"{n:>7} | {f_rate:>13.1f} | {f_rate / n:>10.1f} | {f_rate / base_first:>5.2f} | {a_rate:>10.1f} | "
              f"{a_rate / n:>10.1f} | {a_rate / base_again:>5.2f}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (shared with other work: "
          "a second worker can add at most what the CPUs left idle by the first)")


def run(args, storage: str, tmp: Path, accounts: list[str]) -> None:
    import dagster as dg

    from crawl_assets.definitions import build_definitions
    from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
    from crawl_assets.orchestration.resources import RegistryResource
    from crawl_assets.registry import store as view
    from crawl_assets.orchestration.sensors.registry_sensor import build_registry_sensor
    from crawl_assets.settings import Settings

    sensor = build_registry_sensor()

    print(f"{args.sources} X sources, {storage} instance, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    defs = build_definitions()
    with dg.DagsterInstance.get() as instance:
        # 1. registry -> partitions
        view._cache.clear()
        started = time.perf_counter()
        ctx = dg.build_sensor_context(instance=instance)
        result = sensor(ctx, registry=RegistryResource())
        evaluated = time.perf_counter() - started
        for req in result.dynamic_partitions_requests:
            instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
        cold = time.perf_counter() - started
        assert len(instance.get_dynamic_partitions(SOURCE_PARTITIONS["x"].name)) == args.sources
        started = time.perf_counter()
        sensor(dg.build_sensor_context(instance=instance), registry=RegistryResource())
        warm = time.perf_counter() - started
        view._cache.clear()  # a new process: the pickled snapshot instead of YAML
        started = time.perf_counter()
        view.registry_view(os.environ["CRAWL_REGISTRY"])
        snapshot = time.perf_counter() - started
        print(f"registry -> partitions (cold: parse, validate, diff, bulk add): {cold:.2f} s "
              f"(evaluation {evaluated:.2f} s); warm tick: {warm:.2f} s; new process (snapshot): {snapshot:.2f} s")

        # 2. scheduler tick over 10,000 never-synced sources
        import logging

        logging.getLogger("dagster").setLevel(logging.WARNING)
        _, took = tick(defs, instance)
        _, took2 = tick(defs, instance)
        config = Settings.from_env()  # the knobs are read when the definitions are built
        whole = dataclasses.replace(config, scheduler=dataclasses.replace(config.scheduler, window=args.sources))
        _, full = tick(build_definitions(whole), instance)
        print(f"scheduler tick (window 2,500 of {args.sources}): {took:.2f} s first, {took2:.2f} s next; "
              f"whole registry in one tick: {full:.2f} s")

        # 3. sustained syncs
        with ProcessPoolExecutor(args.workers[0]) as pool:
            list(pool.map(_warm, range(args.workers[0])))
            first, wall, ticks = sync_round(defs, instance, args.workers[0], args.sync, pool)
            print(f"first syncs: {len(first)} sources in {wall:.1f} s = {len(first) / wall:.1f} source-syncs/s "
                  f"({args.workers[0]} run workers, batches up to {args.batch}); ticks {max(ticks):.2f} s max")
            make_due_again(instance, args.sources)
            # (a) what the scheduler does next on its own: it prefers never-synced sources, so this round is
            # mostly other sources' first syncs; the overlap with the first round is printed, not assumed.
            chosen, wall2, _ = sync_round(defs, instance, args.workers[0], len(first), pool)
            overlap = len(chosen & first)
            print(f"next round, the scheduler's choice: {len(chosen)} sources in {wall2:.1f} s = "
                  f"{len(chosen) / wall2:.1f} source-syncs/s (re-syncs of first-round sources among them: {overlap})")
            # (b) true incremental re-syncs: the registry holds only the first round's sources, all due again,
            # each already synced (nothing new at the stand-in: the checkpoints make every fetch a no-op).
            numbers = {int(key.rsplit(".s", 1)[1]) for key in first}
            write_registry(Path(os.environ["CRAWL_REGISTRY"]), args.sources, accounts, only=numbers)
            make_due_again(instance, args.sources)
            again, wall3, ticks3 = sync_round(defs, instance, args.workers[0], len(first), pool)
            if not again or not again <= first:
                raise SystemExit(f"re-sync round synced {len(again - first)} sources outside the first round")
            print(f"incremental re-syncs of the same sources: {len(again)} of {len(first)} in {wall3:.1f} s = "
                  f"{len(again) / wall3:.1f} source-syncs/s; ticks {max(ticks3):.2f} s max")
        _, took3 = tick(defs, instance)
        print(f"scheduler tick after the syncs: {took3:.2f} s")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
