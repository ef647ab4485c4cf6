"""``python -m crawl_assets_tests.e2e.daemon run -w WORKSPACE``: ``dagster-daemon`` whose backfill loop waits 2 s
between iterations instead of 30 s. Dagster fixes that wait in a constant (``DEFAULT_DAEMON_INTERVAL_SECONDS``;
no instance setting exposes it, unlike the run queue's or the sensors' intervals), so a backfill waits up to
30 s to be picked up and again to be seen done. Besides the backfill loop only the auto-materialize tick
without sensors reads it (unused here: automation runs as sensors); every daemon's code is Dagster's own.
"""

from __future__ import annotations

import dagster._daemon.controller as controller

BACKFILL_LOOP_SECONDS = 2

if __name__ == "__main__":
    controller.DEFAULT_DAEMON_INTERVAL_SECONDS = BACKFILL_LOOP_SECONDS  # type: ignore[misc]
    from dagster._daemon.cli import main

    main()
