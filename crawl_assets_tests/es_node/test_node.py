"""The test node's life cycle: a failed start says why and leaves no process; the session node is a real
Elasticsearch with our test analysis plugin, not running as root."""

from __future__ import annotations

import os
import subprocess

import pytest

from crawl_assets_tests.es_node.distribution import Unavailable
from crawl_assets_tests.es_node.fixtures import external_url, required
from crawl_assets_tests.es_node.node import NodeStartError, RealNode


def _java_processes_under(path: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "java" in line and path in line]


class _Watched(RealNode):
    """A node that remembers its working folder (gone from the node once it is stopped)."""

    def __init__(self, **kwargs) -> None:  # noqa: ANN003
        super().__init__(**kwargs)
        self.folders: list[str] = []

    def launch(self, home, java) -> None:  # noqa: ANN001
        super().launch(home, java)
        self.folders.append(str(self.workdir))


def test_a_node_that_cannot_start_says_why_and_leaves_no_process(es_version: str) -> None:
    node = _Watched(heap="1k", start_timeout=120, version=es_version)  # the JVM refuses a 1 KiB heap
    try:
        with pytest.raises(NodeStartError, match="did not start") as info:
            node.start()
    except Unavailable as exc:
        if required():
            pytest.fail(f"CRAWL_TEST_REQUIRE_REAL_ES is set but no real Elasticsearch node: {exc}")
        pytest.skip(f"no real Elasticsearch node: {exc}")
    assert "heap" in str(info.value).lower(), str(info.value)[-2000:]
    assert node.proc is None and node.workdir is None
    assert node.folders, "the node was launched"
    # only this node's processes are looked for: other nodes (another test worker's) may start meanwhile
    assert not [p for folder in node.folders for p in _java_processes_under(folder)], "no JVM of the failed node is left"


@pytest.mark.skipif(bool(external_url()), reason="checks the local test node (CRAWL_TEST_ES_URL is set)")
def test_the_session_node_is_real_and_unprivileged(es_cluster, es_version: str) -> None:
    info = es_cluster.client.nodes.info(node_id="_local", metric="plugins,process,jvm")
    [node] = info["nodes"].values()
    assert node["version"] == es_version and node["build_flavor"] == "default"
    assert [p["name"] for p in node["plugins"]] == ["crawl-test-analysis"]
    pid = node["process"]["id"]
    with open(f"/proc/{pid}/status") as fh:
        uid = next(int(line.split()[1]) for line in fh if line.startswith("Uid:"))
    assert uid != 0, "Elasticsearch must not run as root"
    assert node["jvm"]["mem"]["heap_max_in_bytes"] <= 512 * 1024 * 1024


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[1])


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(bool(external_url()), reason="checks the local test node (CRAWL_TEST_ES_URL is set)")
def test_a_node_whose_owner_is_killed_does_not_outlive_it(tmp_path, es_version: str) -> None:
    """``python -m crawl_assets_tests.es_node`` SIGKILLed (no atexit, no fixture teardown): the launcher
    gets SIGTERM from the kernel (parent-death signal) and stops the server JVM."""
    import json
    import shutil
    import signal
    import sys
    import time
    import urllib.request

    owner = subprocess.Popen([sys.executable, "-m", "crawl_assets_tests.es_node"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env={**os.environ, "CRAWL_TEST_ES_VERSION": es_version})
    try:
        url = (owner.stdout.readline() if owner.stdout else "").strip()
        if not url.startswith("http"):
            message = owner.stderr.read() if owner.stderr else ""
            unavailable = "no real Elasticsearch node" in message or "Java" in message or "Maven" in message
            if unavailable and not required():  # CRAWL_TEST_REQUIRE_REAL_ES: an unavailable node is a failure
                pytest.skip(message.strip().splitlines()[-1])
            raise AssertionError(f"the node did not start: {message[-2000:]}")
        with urllib.request.urlopen(f"{url}/_nodes/_local/process", timeout=30) as resp:
            server = int(next(iter(json.loads(resp.read())["nodes"].values()))["process"]["id"])
        launcher = _ppid(server)
        with open(f"/proc/{server}/environ", "rb") as fh:
            conf = next(v for v in fh.read().split(b"\0") if v.startswith(b"ES_PATH_CONF=")).split(b"=", 1)[1]
    finally:
        owner.kill()
        owner.wait()
    deadline = time.monotonic() + 120
    while (_alive(server) or _alive(launcher)) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [pid for pid in (server, launcher) if _alive(pid)]
    for pid in left:  # do not leak them into the rest of the session, but fail
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(os.path.dirname(conf.decode()), ignore_errors=True)
    assert left == [], "the node outlived the process that started it"
