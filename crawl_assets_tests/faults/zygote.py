"""A fork server for the crash harness: import the whole stack once, then fork one child per sync.

Each request (a JSON line on stdin: ``{"config": path, "kill": "site@n" | null}``) forks a fresh child
from this pristine process (nothing ran here but imports, so no state leaks between runs). The child
arms its kill point (``killpoints.arm``), runs ``child.main`` and exits; the answer (a JSON line on
stdout) is its return code, negative for the signal that ended it (-9: SIGKILL). Forking saves the
seconds of importing Dagster, Telethon and Elasticsearch for each of the many killed runs.
"""

from __future__ import annotations

import json
import os
import sys


def _preload() -> None:
    import dagster  # noqa: F401
    import telethon  # noqa: F401

    import crawl_assets.orchestration.assets  # noqa: F401
    import crawl_assets.index.sink  # noqa: F401
    import crawl_assets.normalize.reading  # noqa: F401
    import crawl_assets.orchestration.resources  # noqa: F401
    import crawl_assets.sources.telegram.collect  # noqa: F401
    import crawl_assets.sources.x.collect  # noqa: F401
    import crawl_assets_tests.faults.child  # noqa: F401
    import crawl_assets_tests.faults.killpoints  # noqa: F401
    import crawl_assets_tests.standins.telegram_mtproto  # noqa: F401
    from crawl_assets.orchestration.assets import raw_asset
    from crawl_assets.core import catalog
    from crawl_assets.instance.storage import event_log_migrations

    for platform in catalog.platforms():
        raw_asset(platform)
    event_log_migrations()  # read once here, not in each child's new run shards


def _child(request: dict) -> None:
    from crawl_assets_tests.faults import child, killpoints

    code = 70
    os.dup2(2, 1)  # stdout carries the protocol: the child writes only to stderr
    try:
        if request.get("log"):
            os.environ["CRAWL_FAULT_LOG"] = request["log"]
        for spec in filter(None, (request.get("kill") or "").split(",")):
            name, _, n = spec.partition("@")
            killpoints.arm(name, int(n or 1))
        code = child.main(request["config"])
    except BaseException:  # noqa: BLE001 - report, then leave without running the parent's cleanup
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main() -> None:
    _preload()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        _, status = os.waitpid(pid, 0)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        print(json.dumps({"returncode": code}), flush=True)


if __name__ == "__main__":
    main()
