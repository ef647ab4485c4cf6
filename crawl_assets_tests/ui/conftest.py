"""The README's newcomer path, then one failing source, served by a real ``dagster-webserver``.

1. ``crawl-assets demo`` in an empty ``DAGSTER_HOME`` (a subprocess, as a user runs it: the session's
   ``demo_home``, copied);
2. ``crawl-assets sources add`` of a live X timeline while no X token is configured, of a truncated X export
   (its last line cut), and of a copy of the sample archive, which syncs once; then its registry entry is
   edited by hand with an option no sync can use (a configuration error, as a revoked token is);
3. one ``x_sync_batch_no_index`` run over the X sources (the scheduler's batch job): the two sample
   exports sync, the truncated one syncs degraded, the timeline and the edited copy fail (paused with the
   reason);
4. ``dagster-webserver`` on the same instance, for GraphQL and browser tests.

Package-scoped (the tests only read it): the webserver takes ~10-30 s to start on a loaded 2-core machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest
import yaml

from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.e2e.services import BIN, Service, free_port, wait_for
from crawl_assets_tests.normalize.shapes import x_page, x_tweet
from crawl_assets_tests.worlds import DemoHome, user_env

FAILING = "demo.x.news"
EXPORTS = ["demo.x.sample-archive", "demo.x.sample-search"]
DEGRADED = "demo.x.cut"  # a truncated export: synced, with 1 of its 2 items rejected
PAUSED = "demo.x.edited"  # synced once, then paused by a configuration error
CUT = b'{"data": [{"id": "1790000000000000002", "text": "the rest of the exp'  # the export ends mid-item


@dataclass
class Stack:
    home: Path
    env: dict[str, str]
    url: str
    batch_run_id: str
    web: Service

    def graphql(self, query: str, variables: dict | None = None) -> dict:
        import httpx

        resp = httpx.post(f"{self.url}/graphql", json={"query": query, "variables": variables or {}}, timeout=120)
        resp.raise_for_status()
        body = resp.json()
        assert not body.get("errors"), body["errors"]
        return body["data"]

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", *args], capture_output=True, text=True,
                              timeout=300, env=self.env, cwd=REPO)


def run_batch(env: dict[str, str], keys: list[str]) -> dg.ExecuteInProcessResult:
    """The scheduler's batch job over ``keys``, in this process, on the instance of ``env``."""
    with pytest.MonkeyPatch.context() as mp:
        for var in set(os.environ) - set(env):
            mp.delenv(var)
        for var, value in env.items():
            mp.setenv(var, value)
        from crawl_assets.definitions import build_definitions

        job = build_definitions().resolve_job_def("x_sync_batch_no_index")
        with dg.DagsterInstance.get() as instance:
            return job.execute_in_process(run_config={"ops": {"x_sync_sources_no_index": {"config": {"partitions": keys}}}},
                                          instance=instance, raise_on_error=False, tags={"crawl/platform": "x"})


@pytest.fixture(scope="package")
def ui_stack(tmp_path_factory, demo_home: DemoHome) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("ui")
    assert demo_home.returncode == 0, demo_home.stderr[-3000:]
    home = demo_home.copy_to(tmp / "crawl_home")
    env = user_env(home)
    stack = Stack(home, env, "", "", None)  # type: ignore[arg-type]
    added = stack.cli("sources", "add", "--platform", "x", "--kind", "account_timeline", "--identifier", "persian_news",
                      "--name", "news", "--tenant", "demo")
    assert added.returncode == 0, added.stderr
    samples = Path(env.get("CRAWL_IMPORT_ROOT") or home / "imports") / "demo" / "samples"
    (samples / "cut.jsonl").write_bytes(x_page(x_tweet("1790000000000000001", "hello")) + b"\n" + CUT)
    (samples / "edited.js").write_bytes((samples / "x_archive_tweets.js").read_bytes())
    for name, file, fmt in (("cut", "cut.jsonl", "x-v2"), ("edited", "edited.js", "x-archive")):
        added = stack.cli("sources", "add", "--platform", "x", "--kind", "export_file", "--name", name, "--tenant",
                          "demo", "--identifier", f"samples/{file}", "--option", f"format={fmt}")
        assert added.returncode == 0, added.stderr
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DAGSTER_HOME", str(home))
        with dg.DagsterInstance.get() as instance:
            instance.add_dynamic_partitions("x_sources", [FAILING, DEGRADED, PAUSED])  # what the registry sensor does
    assert run_batch(env, [PAUSED]).success
    registry = home / "sources.yaml"  # a hand edit no sync can use: a time zone that does not exist
    data = yaml.safe_load(registry.read_text())
    next(e for e in data["sources"] if e["name"] == "edited")["options"]["timezone"] = "Mars/Olympus"
    registry.write_text(yaml.safe_dump(data, allow_unicode=True))
    result = run_batch(env, [FAILING, *EXPORTS, DEGRADED, PAUSED])
    assert not result.success  # one source failed; the run says so
    stack.batch_run_id = result.run_id
    port = free_port()
    stack.web = Service("webserver", [str(BIN / "dagster-webserver"), "-w", str(REPO / "workspace.yaml"),
                                      "-h", "127.0.0.1", "-p", str(port)], env, REPO, tmp)
    stack.url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _answers(stack), 240, "dagster-webserver to answer", stack.web.tail)
        yield stack
    finally:
        stack.web.stop()


def _answers(stack: Stack) -> bool:
    import httpx

    if stack.web.proc.poll() is not None:
        raise AssertionError(f"webserver exited with {stack.web.proc.returncode}\n{stack.web.tail()}")
    try:
        return httpx.get(f"{stack.url}/server_info", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False
