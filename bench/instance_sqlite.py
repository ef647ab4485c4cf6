"""Bench: runs on the project's SQLite instance (``dagster.yaml``: ``EnvSelectedStorage``) beside Dagster's own
SQLite storage (the peer: a ``dagster.yaml`` without ``storage``).

Each contender materializes the same four-asset chain ``--runs`` times in a fresh child process with a fresh
``DAGSTER_HOME`` (after one warm-up run); the child's CPU time and wall time for those runs are printed side by
side, with the number of events each run wrote (equal: the same work is stored). Interleaved, medians printed.

    python bench/instance_sqlite.py [--runs 20] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
import dagster as dg

@dg.asset
def a(): return 1
@dg.asset
def b(a): return a + 1
@dg.asset
def c(b): return b + 1
@dg.asset
def d(c): return c + 1

runs = int(sys.argv[1])
with dg.DagsterInstance.get() as instance:
    dg.materialize([a, b, c, d], instance=instance)
    wall, cpu = time.monotonic(), time.process_time()
    for _ in range(runs):
        result = dg.materialize([a, b, c, d], instance=instance)
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    events = len(instance.all_logs(result.run_id))
    print(json.dumps({"storage": type(instance.event_log_storage).__name__, "wall": wall, "cpu": cpu,
                      "events": events}))
"""


def measure(instance_yaml: str, runs: int) -> dict:
    home = Path(tempfile.mkdtemp(prefix="bench-instance-"))
    try:
        (home / "dagster.yaml").write_text(instance_yaml)
        env = {"PATH": "/usr/bin:/bin", "DAGSTER_HOME": str(home), "PYTHONPATH": str(REPO)}
        out = subprocess.run([sys.executable, "-c", CHILD, str(runs)], env=env, cwd=home, capture_output=True,
                             text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    contenders = {"ours": (REPO / "dagster.yaml").read_text(), "dagster": "telemetry:\n  enabled: false\n"}
    results: dict[str, list[dict]] = {name: [] for name in contenders}
    for _ in range(args.repeats):
        for name, instance_yaml in contenders.items():
            results[name].append(measure(instance_yaml, args.runs))
    print(f"{args.runs} runs of a four-asset chain on SQLite, median of {args.repeats}")
    print(f"{'storage':<10} {'event log class':<24} {'CPU s':>7} {'wall s':>7} {'CPU ms/run':>11} {'events/run':>11}")
    for name, rows in results.items():
        cpu = statistics.median(r["cpu"] for r in rows)
        wall = statistics.median(r["wall"] for r in rows)
        print(f"{name:<10} {rows[0]['storage']:<24} {cpu:>7.2f} {wall:>7.2f} {1000 * cpu / args.runs:>11.0f} "
              f"{rows[0]['events']:>11}")
    if results["ours"][0]["events"] != results["dagster"][0]["events"]:
        print("error: the two stored different numbers of events", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
