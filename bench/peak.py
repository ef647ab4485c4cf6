"""Peak RSS of this process for the benches: VmHWM (the high-water mark of this process's own memory since its
exec), not ``ru_maxrss``, which Linux carries over an exec: a worker started from a bench that held a large data
set would report the bench's peak as its own."""

from __future__ import annotations

import resource
from pathlib import Path


def peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
