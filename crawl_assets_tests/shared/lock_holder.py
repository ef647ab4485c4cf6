"""A second process for the lock tests: ``python -m crawl_assets_tests.shared.lock_holder KIND NAME``.

Takes the source lock (KIND ``source``) or the Telegram account lock (KIND ``telegram``: NAME is
``tenant:credential``) from the environment's instance, prints ``held`` (or ``busy``), holds it until a line
arrives on stdin (or until it is killed), then writes the pacing note ``NOTE`` when given and releases.
"""

from __future__ import annotations

import os
import sys
from contextlib import AbstractContextManager
from typing import Any


def lock_for(kind: str, name: str) -> AbstractContextManager[Any]:
    if kind == "source":
        from crawl_assets.locks.shared import source_lock

        return source_lock(name, wait_seconds=0)
    from crawl_assets.sources.telegram.pacing import AccountLock

    tenant, _, credential = name.partition(":")
    return AccountLock(os.path.join(os.environ["DAGSTER_HOME"], "locks"), tenant, credential or None, wait_seconds=0)


def main(kind: str, name: str) -> int:
    from crawl_assets.locks.shared import SourceBusy
    from crawl_assets.sources.telegram.errors import AccountBusy

    try:
        with lock_for(kind, name) as lock:
            print(f"held {getattr(lock, 'last_request', '')}".strip(), flush=True)
            sys.stdin.readline()
            if lock is not None and os.environ.get("NOTE"):
                lock.last_request = float(os.environ["NOTE"])
    except (SourceBusy, AccountBusy):
        print("busy", flush=True)
        return 3
    print("released", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
