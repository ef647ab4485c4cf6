"""Bench: the two-machine test at full size (200 Hacker News sources; CI runs it with 20).

Runs ``crawl_assets_tests/shared/test_two_machines.py`` with ``CRAWL_TWO_MACHINES_N`` sources (every assertion
of the test holds at that size too) and prints its phases side by side: the one-worker run (the peer: one
run worker syncing every source) and the two workers sharing them until one is SIGKILLed after a quarter,
the survivor finishing and the re-run of what the instance shows unfinished.

    CRAWL_TEST_PG_URL=postgresql+psycopg2://postgres@127.0.0.1:5432/test python bench/two_machines.py [--sources 200]

Needs what the test needs: the PostgreSQL server of ``CRAWL_TEST_PG_URL``, Java and Maven for the real node.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEST = "crawl_assets_tests/shared/test_two_machines.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=int, default=200)
    args = parser.parse_args()
    if not os.environ.get("CRAWL_TEST_PG_URL"):
        print("error: set CRAWL_TEST_PG_URL (the PostgreSQL server the workers share)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-two-machines-") as tmp:
        figures_path = Path(tmp) / "figures.json"
        env = {**os.environ, "CRAWL_TWO_MACHINES_N": str(args.sources), "CRAWL_BENCH_FIGURES": str(figures_path),
               "CRAWL_TEST_REQUIRE_REAL_ES": "1"}
        print(f"{args.sources} sources, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}", flush=True)
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", TEST],
                              cwd=REPO, env=env, capture_output=True, text=True)
        total = time.monotonic() - started
        if done.returncode != 0 or not figures_path.exists():
            print(done.stdout[-4000:], done.stderr[-2000:], sep="\n", file=sys.stderr)
            print("error: the test failed; no figures", file=sys.stderr)
            return 1
        fig = json.loads(figures_path.read_text())
    solo, pair = fig["solo_seconds"], fig["pair_seconds"]
    n = fig["sources"]
    print(f"\n{'run':<34}{'sources':>9}{'seconds':>10}{'sources/s':>11}")
    print(f"{'one worker (peer)':<34}{n:>9}{solo:>10.1f}{n / solo:>11.2f}")
    print(f"{'two workers, B killed at ' + format(fig['killed_after_seconds'], '.0f') + ' s':<34}{n:>9}{pair:>10.1f}"
          f"{n / pair:>11.2f}")
    print(f"\nsources synced: A {fig['a_sources']}, B {fig['b_sources']} (killed), re-run {fig['rerun_sources']}; "
          f"{fig['items']} items; two workers / one: {solo / pair:.2f}x")
    print(f"whole test {total:.0f} s; load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
          f"(shared with other work: the ratio says how much CPU was left idle as much as how the workers scale)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
