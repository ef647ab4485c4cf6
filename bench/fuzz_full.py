"""Full-size reliability runs (docs/RELIABILITY.md): the normalizer fuzzers at 10,000 generated cases per
test and format, and the crash-convergence chain at 4x size (more data, every kill point 4 times).

    python bench/fuzz_full.py            # both
    python bench/fuzz_full.py fuzz       # fuzzers only (CRAWL_FUZZ_EXAMPLES=10000)
    python bench/fuzz_full.py faults     # crash convergence only (CRAWL_FAULTS_SCALE=4)

Prints each part's wall time and pytest's summary, then every failing test by name with the line that
says why (pytest's short summary, and the falsifying example Hypothesis printed); exits non-zero when a
part fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PARTS = {
    "fuzz": ({"CRAWL_FUZZ_EXAMPLES": "10000"}, ["crawl_assets_tests/fuzz"]),
    "faults": ({"CRAWL_FAULTS_SCALE": "4"}, ["crawl_assets_tests/faults/test_crash_convergence.py"]),
}


def main(argv: list[str]) -> int:
    failed = 0
    for name in argv or list(PARTS):
        env_extra, paths = PARTS[name]
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *paths],
                              cwd=REPO, env={**os.environ, **env_extra}, capture_output=True, text=True)
        lines = proc.stdout.strip().splitlines()
        summary = lines[-1] if lines else proc.stderr[-500:]
        print(f"{name:7s} {time.perf_counter() - started:8.1f} s  {summary}")
        if proc.returncode != 0:
            failed += 1
            for line in failures(lines):
                print(f"        {line}")
    return 1 if failed else 0


def failures(lines: list[str]) -> list[str]:
    """The failing tests (pytest's FAILED/ERROR summary lines) and Hypothesis's falsifying examples."""
    wanted = ("FAILED ", "ERROR ", "Falsifying example", "E   ")
    picked = [line for line in lines if line.startswith(wanted) or line.lstrip().startswith("Falsifying example")]
    return picked[-60:] or lines[-40:]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
