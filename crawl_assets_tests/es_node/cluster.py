"""A real multi-node Elasticsearch cluster for a test: N ``RealNode`` processes of the same genuine
distribution forming one cluster over loopback, each with its own config, data and ports, each run as
``nobody`` under root, each with a small heap (three nodes fit beside the session's single node) and C1
compilation only (they live for one test: their start costs more CPU than their work). Members are
launched, and stopped, together.

Discovery is the production one, not ``single-node``: ``discovery.seed_hosts`` lists every member's
transport address and ``cluster.initial_master_nodes`` names all of them for the first election. ``kill(i)``
SIGKILLs one member's JVM (a crash, not a shutdown); ``stop()`` stops whatever is left and removes the
folders, also when a start fails.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

from crawl_assets_tests.es_node.node import QUICK_JIT, Membership, NodeStartError, RealNode, prepare_home


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports (all held open until all are chosen, so none repeats)."""
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]


class RealCluster:
    """``with RealCluster(3) as cluster: cluster.urls`` (every member's HTTP URL)."""

    def __init__(self, size: int = 3, heap: str = "256m", start_timeout: float = 300.0) -> None:
        if size < 2:
            raise ValueError("a cluster has at least 2 nodes (use RealNode for one)")
        self.size, self.heap, self.start_timeout = size, heap, start_timeout
        self.nodes: list[RealNode] = []

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    def start(self) -> "RealCluster":
        home, java = prepare_home()
        for attempt in range(3):  # a port taken between free_ports() and the bind: start on others
            try:
                return self._start_once(home, java)
            except NodeStartError as exc:
                if attempt == 2 or ("BindException" not in str(exc) and "Address already in use" not in str(exc)):
                    raise
        raise AssertionError("unreachable")

    def _start_once(self, home, java) -> "RealCluster":
        ports = free_ports(2 * self.size)
        http, transport = ports[: self.size], ports[self.size:]
        names = tuple(f"crawl-test-{i}" for i in range(self.size))
        seeds = tuple(f"127.0.0.1:{port}" for port in transport)
        cluster_name = f"crawl-test-cluster-{os.getpid()}"
        self.nodes = [RealNode(self.heap, self.start_timeout,
                               Membership(cluster_name, names[i], http[i], transport[i], seeds, names), QUICK_JIT)
                      for i in range(self.size)]
        try:
            for node in self.nodes:
                node.launch(home, java)
            for node in self.nodes:
                node.wait_healthy()
            self.wait_for(nodes=self.size)
        except BaseException:
            self.stop()
            raise
        return self

    def health(self, **params: str) -> dict:
        """``_cluster/health`` from any member that answers (``params`` e.g. ``wait_for_status``)."""
        query = "&".join(f"{k}={v}" for k, v in params.items())
        last: Exception | None = None
        for node in self.nodes:
            if node.proc is None or node.proc.poll() is not None:
                continue
            try:
                with urllib.request.urlopen(f"{node.url}/_cluster/health?{query}", timeout=60) as resp:
                    return json.loads(resp.read())
            except urllib.error.HTTPError as exc:  # 408: the wait timed out; the body is still the health
                return json.loads(exc.read() or b"{}")
            except (urllib.error.URLError, OSError) as exc:
                last = exc
        raise NodeStartError(f"no member of the cluster answers: {last}")

    def wait_for(self, nodes: int, status: str = "yellow") -> dict:
        """Wait until the cluster has exactly ``nodes`` members and at least ``status`` health."""
        deadline = time.monotonic() + self.start_timeout
        health: dict = {}
        while time.monotonic() < deadline:
            health = self.health(wait_for_nodes=str(nodes), wait_for_status=status, timeout="5s")
            if not health.get("timed_out", True) and health.get("number_of_nodes") == nodes:
                return health
            time.sleep(0.5)
        tails = "\n".join(f"--- {n.membership.node_name}:\n{n.log_tail(15)}" for n in self.nodes if n.membership)
        raise NodeStartError(f"the cluster did not reach {nodes} nodes / {status} within {self.start_timeout:.0f}s: "
                             f"{health}\n{tails}")

    def node_named(self, name: str) -> RealNode:
        [node] = [n for n in self.nodes if n.membership is not None and n.membership.node_name == name]
        return node

    def kill(self, node: RealNode) -> None:
        node.kill()

    def stop(self) -> None:
        if self.nodes:
            with ThreadPoolExecutor(len(self.nodes)) as pool:
                list(pool.map(RealNode.stop, self.nodes))

    def __enter__(self) -> "RealCluster":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
