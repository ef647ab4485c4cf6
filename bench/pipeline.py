"""Bench: one source's whole chain through Dagster, as the scheduler runs it, beside bare ``crawl-assets normalize``.

For a generated input of N records (X v2 search pages, or a Telegram Desktop export) registered as one
export-file source, in a fresh SQLite instance and lake:

  1. bare ``crawl-assets normalize`` (records and edges to real files) on the same file: the reference;
  2. one run of ``{platform}_sync_no_index`` for that partition (raw → normalized_records → relation_edges),
     as the scheduler launches it: per-step wall and CPU time (from the run's step events and a CPU
     sampler in the run's process), records/s, and the peak RSS of the process tree;
  3. the same job again with nothing new at the source (a no-op sync): run time per step, files it wrote in
     the lake, and (with the index) documents sent;
  4. a raw batch of 1% more (new) records added to the source as a collector would, and the job once more:
     each step's time beside the first run's (the relation step's: incremental against a full build);
  5. with ``--index`` (default when Java and Maven are present): the same on ``{platform}_sync`` against a
     local real Elasticsearch node (or ``--es-url``), warmed first by a smaller sync, index step included;
     the index step beside the replay ceiling (its documents read back from the node and sent again by plain
     bulk requests, ``bench/replay.py``), with the node's CPU per record, and the bound the cores set on both
     ratios: (client CPU + node CPU) / cores, at the node CPU the step cost and at the replay's.

Prints the goals of issues 18 and 32 beside the figures: end to end >= 0.5x bare normalize records/s, peak RSS
<= 300 MiB at 100k records, a no-op sync that writes nothing and runs its steps in <= 1 s, a sync of 1% more
records whose relation step costs <= 5% of the full build's.

    python bench/pipeline.py [--records 100000] [--platform x|telegram|both] [--no-index] [--es-url URL]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import ijson
import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from normalize import PERSIAN, TAGS, _tree_rss, make_input, measure  # noqa: E402  (bench/normalize.py)
from pipeline_index import TENANT, NodeCpuSampler, drop_tenants, index_vs_ceiling, met, node_cpu, warm_node  # noqa: E402  (bench/pipeline_index.py)

FORMATS = {"x": "x-v2", "telegram": "telegram-export"}


def make_telegram_export(path: Path, messages: int, seed: int = 11, first_id: int = 1) -> None:
    """A Telegram Desktop export (result.json) of one public channel: messages with text entities
    (hashtags, links, mentions), replies, forwards and reactions, and a few service messages."""
    rng = random.Random(seed)
    when = datetime(2024, 5, 1, tzinfo=timezone.utc)
    out: list[dict[str, Any]] = []
    for i in range(first_id, first_id + messages):
        when += timedelta(seconds=rng.randint(5, 120))
        date = {"date": when.strftime("%Y-%m-%dT%H:%M:%S"), "date_unixtime": str(int(when.timestamp()))}
        if i % 500 == 1:
            out.append({"id": i, "type": "service", **date, "actor": "کانال آزمون", "actor_id": "channel1987000001",
                        "action": "pin_message", "message_id": max(1, i - 1), "text": "", "text_entities": []})
            continue
        tag = rng.choice(TAGS)
        parts: list[Any] = [rng.choice(PERSIAN), " ", {"type": "hashtag", "text": f"#{tag}"}]
        if rng.random() < 0.3:
            parts += [" ", {"type": "mention", "text": f"@user_{rng.randint(1, 400)}"}]
        if rng.random() < 0.4:
            parts += [" ", {"type": "link", "text": f"https://example.org/n/{i}"}]
        entities = [p if isinstance(p, dict) else {"type": "plain", "text": p} for p in parts]
        message: dict[str, Any] = {"id": i, "type": "message", **date, "from": "کانال آزمون",
                                   "from_id": "channel1987000001", "text": parts, "text_entities": entities}
        roll = rng.random()
        if roll < 0.15 and i > 2:
            message["reply_to_message_id"] = rng.randint(1, i - 1)
        elif roll < 0.25:
            message["forwarded_from"] = "کانال دیگر"
        if rng.random() < 0.5:
            message["reactions"] = [{"type": "emoji", "count": rng.randint(1, 90), "emoji": "🔥"}]
        out.append(message)
    path.write_bytes(orjson.dumps({"name": "کانال آزمون", "type": "public_channel", "id": 1987000001, "messages": out}))


def input_file(platform: str, n: int) -> Path:
    OUT.mkdir(exist_ok=True)
    if platform == "x":
        path = OUT / f"x_v2_{n}.jsonl"
        if not path.exists():
            make_input(path, n)
    else:
        path = OUT / f"telegram_export_{n}.json"
        if not path.exists():
            make_telegram_export(path, n)
    return path


# ---------------------------------------------------------------------------------------------------- child


class CpuSampler(threading.Thread):
    """(wall time, process CPU seconds, RSS of the process tree) every 20 ms (the RSS every 100 ms), to split
    the run's CPU time and peak memory by step."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[tuple[float, float]] = []
        self.rss: list[tuple[float, int]] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        ticks = 0
        while not self.stopping.is_set():
            self.samples.append((time.time(), time.process_time()))
            if ticks % 5 == 0:
                self.rss.append((time.time(), _tree_rss(os.getpid())))
            ticks += 1
            time.sleep(0.02)

    def cpu_between(self, start: float, end: float) -> float:
        inside = [cpu for wall, cpu in self.samples if start <= wall <= end]
        return inside[-1] - inside[0] if len(inside) > 1 else 0.0

    def rss_between(self, start: float, end: float) -> tuple[float, float]:
        """(MiB at the step's start, peak MiB during it) of the process tree."""
        before = [rss for wall, rss in self.rss if wall <= start]
        inside = [rss for wall, rss in self.rss if start <= wall <= end]
        first = before[-1] if before else (inside[0] if inside else 0)
        return first / 2**20, max(inside, default=first) / 2**20


def lake_files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def child(platform: str, data: Path, work: Path, job_name: str) -> None:
    """Register the file as one source in a fresh instance and lake, run the job twice (the second a no-op),
    print one JSON line per run."""
    os.environ.update({"DAGSTER_HOME": str(work / "home"), "CRAWL_LAKE": str(work / "lake"),
                       "CRAWL_REGISTRY": str(work / "sources.yaml"), "CRAWL_IMPORT_ROOT": str(work / "imports")})
    (work / "home").mkdir(parents=True)
    shutil.copyfile(REPO / "dagster.yaml", work / "home" / "dagster.yaml")
    target = work / "imports" / TENANT / data.name
    target.parent.mkdir(parents=True)
    os.link(data, target) if data.stat().st_dev == target.parent.stat().st_dev else shutil.copyfile(data, target)

    import dagster as dg

    from crawl_assets.definitions import defs
    from crawl_assets.registry import SourceEntry, load_registry

    registry = load_registry(Path(os.environ["CRAWL_REGISTRY"]))
    entry = SourceEntry(name="big", tenant=TENANT, platform=platform, kind="export_file", identifier=data.name,
                        options={"format": FORMATS[platform]})
    registry.add(entry)
    registry.save()
    quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    job = defs.resolve_job_def(job_name)
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions(f"{platform}_sources", [entry.key])
        for label in ("first sync", "no-op sync", "1% more"):
            if label == "1% more":
                add_new_records(platform, data, work, entry.key)
            figures = run_once(instance, job, entry.key, work, label, quiet)
            if label == "1% more":
                figures["relations_fn"] = relation_work(platform, work, entry.key)
            print(json.dumps(figures), flush=True)


def relation_work(platform: str, work: Path, source: str) -> dict[str, float]:
    """The relation tables' work alone, in this process (no Dagster step around it), CPU seconds: a rebuild
    from all parts, and the incremental refresh adding the last part to tables derived from the others."""
    from crawl_assets.lake import Lake
    from crawl_assets.pipeline.normalize.stage import TABLE
    from crawl_assets.pipeline.relate.stage import all_current, rebuild
    from crawl_assets.pipeline.relate.stage import refresh_relations

    lake = Lake(str(work / "lake"))
    ids = lake.part_ids(TABLE, TENANT, platform, source)
    cpu = time.process_time()
    rebuild(lake, TENANT, platform, source, ids, all_current(lake, TENANT, platform, source, ids))
    full = time.process_time() - cpu
    rebuild(lake, TENANT, platform, source, ids[:-1], True)
    cpu = time.process_time()
    mode = refresh_relations(lake, TENANT, platform, source).mode
    return {"full": full, "incremental": time.process_time() - cpu, "mode": mode}


def add_new_records(platform: str, data: Path, work: Path, source: str) -> None:
    """A raw batch of 1% more records (ids the source has not seen) in the source's lake, as a collector
    writes one: same format and normalization options as the source's first batch."""
    from crawl_assets.lake import Lake
    from crawl_assets.lake.layout import new_batch_id

    lake = Lake(str(work / "lake"))
    first = lake.raw_batches(TENANT, platform, source)[0].manifest
    extra = work / f"more-{data.name}"
    count = max(1, first_items(platform, data) // 100)
    if platform == "x":
        make_input(extra, count, seed=99)  # other random id steps: new tweets
    else:
        make_telegram_export(extra, count, seed=99, first_id=10_000_000)
    with extra.open("rb") as stream:
        lake.write_raw_batch(tenant=TENANT, platform=platform, source=source, batch_id=new_batch_id("bench", 1),
                             fmt=first.format, method=first.method, run_id=None, stream=stream, extra=first.extra)


def first_items(platform: str, data: Path) -> int:
    """How many items the bench input holds (its N)."""
    with data.open("rb") as handle:
        if platform == "x":
            return sum(len(orjson.loads(line)["data"]) for line in handle)
        # streamed: this runs in the measured process, and a whole export as Python objects (~10x the file)
        # was the brief peak of the Telegram runs (666 MiB at 20k messages), charged to the pipeline
        return sum(1 for prefix, event, _ in ijson.parse(handle) if prefix == "messages.item" and event == "start_map")


def run_once(instance: Any, job: Any, partition: str, work: Path, label: str, run_config: dict) -> dict[str, Any]:
    """One run of the job for the partition: wall/CPU per step, lake files written, some figures."""
    before = lake_files(work / "lake") if (work / "lake").exists() else {}
    node_before = node_cpu()
    sampler, node_sampler = CpuSampler(), NodeCpuSampler()
    sampler.start()
    node_sampler.start()
    started, cpu0 = time.time(), time.process_time()
    result = job.execute_in_process(partition_key=partition, instance=instance, raise_on_error=False,
                                    run_config=run_config)
    wall, cpu = time.time() - started, time.process_time() - cpu0
    node_after = node_cpu()
    sampler.stopping.set()
    node_sampler.stopping.set()
    sampler.join()
    node_sampler.join()
    after = lake_files(work / "lake")
    written = sorted(path for path, mtime in after.items() if before.get(path) != mtime)
    steps: dict[str, dict[str, float]] = {}
    opened: dict[str, float] = {}
    for record in instance.all_logs(result.run_id):
        event = record.dagster_event
        if event is None or event.step_key is None:
            continue
        if event.event_type_value == "STEP_START":
            opened[event.step_key] = record.timestamp
        elif event.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE") and event.step_key in opened:
            start = opened[event.step_key]
            rss_start, rss_peak = sampler.rss_between(start, record.timestamp)
            steps[event.step_key] = {"wall": record.timestamp - start, "cpu": sampler.cpu_between(start, record.timestamp),
                                     "rss_start": rss_start, "rss_peak": rss_peak, "start": start}
    figures: dict[str, Any] = {}
    for event in result.get_asset_materialization_events():
        mat = event.event_specific_data.materialization
        for name, value in mat.metadata.items():
            if name in ("records_written", "edges_written", "indexed", "created", "updated", "records_fetched",
                        "mode", "records_created", "records_updated", "documents_sent", "records_docs",
                        "edges_docs"):
                figures[f"{mat.asset_key.path[-1]}.{name}"] = value.value
    tree = [rss / 2**20 for _, rss in sampler.rss] or [0.0]  # this run's RSS of the process tree, MiB
    return {"label": label, "success": result.success, "wall": wall, "cpu": cpu, "steps": steps,
            "rss_start": tree[0], "rss_peak": max(tree), "written": written, "figures": figures,
            "node_cpu": None if node_before is None else node_after - node_before,
            "node_cpu_index": node_sampler.since_index_step(steps, node_after)}


# --------------------------------------------------------------------------------------------------- parent


def run_child(platform: str, data: Path, job_name: str, es_url: str | None) -> tuple[list[dict], float]:
    """The child's three runs and the peak RSS (MiB) of its process tree."""
    work = Path(tempfile.mkdtemp(prefix="crawl_pipeline_bench_"))
    env = {**os.environ}
    env.pop("CRAWL_ES_URL", None)
    if es_url:
        env["CRAWL_ES_URL"] = es_url
    cmd = [sys.executable, __file__, "--child", platform, str(data), str(work), job_name]
    try:
        with tempfile.TemporaryFile() as out:
            result = measure(cmd, stdout=out, cwd=REPO, env=env)
            out.seek(0)
            lines = [json.loads(line) for line in out.read().decode().splitlines() if line.startswith("{")]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if result[3] != 0 or len(lines) != 3 or not all(line["success"] for line in lines):
        raise SystemExit(f"{job_name} bench run failed (exit {result[3]}); its stderr is above")
    return lines, result[2]


def bare_normalize(platform: str, data: Path) -> tuple[float, float, int]:
    """(wall s, CPU s, records written) of bare ``crawl-assets normalize`` with edges, to real files."""
    cmd = [sys.executable, "-m", "crawl_assets.cli.main", "normalize", "-q", "--format", FORMATS[platform],
           "--relations-out", str(OUT / "pipeline_edges.jsonl"), str(data)]
    records = OUT / "pipeline_records.jsonl"
    with records.open("wb") as sink:
        wall, cpu, _rss, code = measure(cmd, stdout=sink, cwd=REPO)
    if code != 0:
        raise SystemExit("bare normalize failed")
    with records.open("rb") as handle:
        return wall, cpu, sum(1 for _ in handle)


def report(platform: str, n: int, data: Path, es_url: str | None) -> None:
    size = data.stat().st_size / 2**20
    print(f"\n== {platform}: {n:,} generated items, {FORMATS[platform]} ({size:.0f} MiB), {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")
    b_wall, b_cpu, records = bare_normalize(platform, data)
    if records == 0:
        raise SystemExit("bare normalize wrote no records: nothing to compare")
    print(f"{'what':<44}{'wall s':>8}{'CPU s':>8}{'records/s':>11}{'vs bare':>9}{'peak RSS':>10}  (a step: RSS at its "
          f"start -> its peak)")
    print(f"{'bare crawl-assets normalize (+ edges)':<44}{b_wall:>8.2f}{b_cpu:>8.2f}{records / b_wall:>11,.0f}"
          f"{'1.00x':>9}")
    jobs = [f"{platform}_sync_no_index"] + ([f"{platform}_sync"] if es_url else [])
    for job_name in jobs:
        if es_url:
            drop_tenants(es_url)
        # the job with the index step is defined when a cluster is configured, the other one when none is
        (first, noop, more), rss = run_child(platform, data, job_name, None if job_name.endswith("_no_index") else es_url)
        written = first["figures"].get("normalized_records.records_written")
        if written != records:
            print(f"  ! {job_name} wrote {written} records, bare normalize {records}: the chains disagree")
        for step, fig in first["steps"].items():
            print(f"  {step:<42}{fig['wall']:>8.2f}{fig['cpu']:>8.2f}{records / max(fig['wall'], 1e-9):>11,.0f}"
                  f"{'':>9}{fig['rss_start']:>5.0f} -> {fig['rss_peak']:.0f} MiB")
        ratio = (records / first["wall"]) / (records / b_wall)
        print(f"{job_name + ', one run, end to end':<44}{first['wall']:>8.2f}{first['cpu']:>8.2f}"
              f"{records / first['wall']:>11,.0f}{ratio:>8.2f}x{rss:>7.0f} MiB")
        print(f"  peak RSS of the process tree: first sync {first['rss_peak']:.0f} MiB, 1% more {more['rss_peak']:.0f}"
              f" MiB (from {more['rss_start']:.0f}), whole child {rss:.0f} MiB")
        steps_wall = sum(fig["wall"] for fig in noop["steps"].values())
        derived = {k: v for k, v in noop["steps"].items() if not k.endswith("_raw")}
        derived_wall = sum(fig["wall"] for fig in derived.values())
        print(f"  no-op re-run: run {noop['wall']:.2f} s (steps {steps_wall:.2f} s), {len(noop['written'])} lake files "
              f"written{': ' + ', '.join(noop['written'][:4]) if noop['written'] else ''}; "
              f"figures {noop['figures'] or 'none'}")
        print("    " + ", ".join(f"{k} {v['wall']:.2f} s ({v['cpu']:.2f} s CPU)" for k, v in noop["steps"].items()))
        more_new = more["figures"].get("normalized_records.records_written")
        print(f"  1% more ({more_new} records written): run {more['wall']:.2f} s; relation mode "
              f"{more['figures'].get('relation_edges.mode')}; step wall vs the first run's:")
        print("    " + ", ".join(f"{k} {v['wall']:.2f} s ({share_of(v, first['steps'].get(k), 'wall')} wall, "
                                 f"{share_of(v, first['steps'].get(k), 'cpu')} CPU)" for k, v in more["steps"].items()))
        fn = more.get("relations_fn") or {}
        if fn:
            print(f"  relation work alone (no step around it): full build {fn['full']:.2f} s CPU, adding the 1% "
                  f"({fn['mode']}) {fn['incremental']:.2f} s CPU = {fn['incremental'] / max(fn['full'], 1e-9):.0%}")
        if job_name.endswith("_sync") and es_url:
            index_vs_ceiling(first, es_url, records, records / b_wall)
        rel = next((k for k in more["steps"] if k.endswith("relation_edges")), None)
        share = more["steps"][rel]["wall"] / first["steps"][rel]["wall"] if rel else float("nan")
        share_cpu = more["steps"][rel]["cpu"] / max(first["steps"][rel]["cpu"], 1e-9) if rel else float("nan")
        print(f"  goals: end to end >= 0.5x bare ({ratio:.2f}x: {met(ratio >= 0.5)}); peak RSS <= 300 MiB at 100k "
              f"({rss:.0f} MiB at {records:,}: {met(rss <= 300)}); no-op writes nothing ({len(noop['written'])} files: "
              f"{met(not noop['written'])}) in <= 1 s of steps (all {steps_wall:.2f} s: {met(steps_wall <= 1)}; "
              f"derived steps {derived_wall:.2f} s: {met(derived_wall <= 1)}); 1% more costs <= 5% of a full "
              f"relation build ({share:.0%} wall: {met(share <= 0.05)}; {share_cpu:.0%} CPU: {met(share_cpu <= 0.05)})")


def share_of(now: dict[str, float], before: dict[str, float] | None, what: str) -> str:
    return f"{now[what] / before[what]:.0%}" if before and before[what] > 0 else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--platform", choices=["x", "telegram", "both"], default="both")
    parser.add_argument("--no-index", action="store_true", help="leave the index step out")
    parser.add_argument("--es-url", help="an existing cluster instead of a local real node")
    parser.add_argument("--no-warmup", action="store_true", help="measure on the node as it is (no warm-up sync)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        platform, data, work, job_name = args.child
        child(platform, Path(data), Path(work), job_name)
        return
    platforms = ["x", "telegram"] if args.platform == "both" else [args.platform]
    node = None
    es_url = None if args.no_index else args.es_url
    if not args.no_index and not es_url:
        from crawl_assets_tests.es_node.node import RealNode

        node = RealNode(heap="1g").start()
        es_url = node.url
    try:
        if es_url and not args.no_warmup:  # a fresh node's JIT makes the first loads slower: warm it first
            warm = min(args.records, 50_000)
            drop_tenants(es_url)
            run_child(platforms[0], input_file(platforms[0], warm), f"{platforms[0]}_sync", es_url)
            warm_node(es_url)
        for platform in platforms:
            report(platform, args.records, input_file(platform, args.records), es_url)
    finally:
        if node is not None:
            node.stop()


if __name__ == "__main__":
    main()
