"""The index step of ``bench/pipeline.py`` beside the replay ceiling, and the node's CPU per record."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

TENANT = "bench"
CEILING = "ceiling"  # the tenant the replay ceiling writes to


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def node_cpu() -> float | None:
    """CPU seconds of the Elasticsearch node the runs write to (None without one)."""
    url = os.environ.get("CRAWL_ES_URL")
    if not url:
        return None
    from elasticsearch import Elasticsearch

    from replay import node_cpu_seconds  # bench/replay.py

    with Elasticsearch(url) as client:
        return node_cpu_seconds(client)


class NodeCpuSampler(threading.Thread):
    """The node's process CPU seconds every 0.5 s during a run (no merge wait), to charge each step its own."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[tuple[float, float]] = []
        self.stopping = threading.Event()
        self.url = os.environ.get("CRAWL_ES_URL")

    def run(self) -> None:
        if not self.url:
            return
        from elasticsearch import Elasticsearch

        with Elasticsearch(self.url) as client:
            while not self.stopping.is_set():
                stats = client.nodes.stats(metric="process")["nodes"]
                cpu = sum(n["process"]["cpu"]["total_in_millis"] for n in stats.values()) / 1000
                self.samples.append((time.time(), cpu))
                self.stopping.wait(0.5)

    def since_index_step(self, steps: dict[str, dict[str, float]], after: float | None) -> float | None:
        """The node's CPU from the index step's start to ``after`` (read once its merges ended); None without
        the step or a node."""
        start = next((fig["start"] for key, fig in steps.items() if key.endswith("search_index")), None)
        before = [cpu for wall, cpu in self.samples if start is not None and wall <= start]
        return None if not before or after is None else after - before[-1]


def drop_tenants(es_url: str) -> None:
    from elasticsearch import Elasticsearch

    from replay import drop

    with Elasticsearch(es_url, request_timeout=300) as client:
        for tenant in (TENANT, CEILING):
            drop(client, tenant)


def warm_node(es_url: str) -> None:
    """After the warm-up sync: its documents replayed twice more (``replay.warm``)."""
    from elasticsearch import Elasticsearch

    from replay import warm

    with Elasticsearch(es_url, request_timeout=300) as client:
        warm(client, TENANT)


def index_vs_ceiling(first: dict[str, Any], es_url: str, records: int, bare_rate: float) -> None:
    """The index step of the first sync beside the replay ceiling: the same documents read back from the node
    and sent again by plain bulk requests (8 MiB bodies, the best of 2, 3 and 4 in flight and of two orders, refresh off;
    ``bench/replay.py``)."""
    from elasticsearch import Elasticsearch

    from replay import best_replay, read_back

    step = next(fig for key, fig in first["steps"].items() if key.endswith("search_index"))
    sent = sum(int(first["figures"].get(f"search_index.{k}", 0)) for k in ("records_docs", "edges_docs"))
    with Elasticsearch(es_url, request_timeout=300) as client:
        lines = read_back(client, TENANT, CEILING)
        ceiling = best_replay(client, lines, CEILING, body_mib=8)
    rate = sent / step["wall"]
    node = first.get("node_cpu_index")  # from the step's start to the end of its merges
    whole = first.get("node_cpu")
    print(f"  {'index step (first sync)':<42}{step['wall']:>8.2f}{step['cpu']:>8.2f}{rate:>11,.0f} docs/s; "
          f"{sent:,} documents ({sent / records:.2f} per record); node CPU "
          + (f"{node:.1f} s = {1e6 * node / records:.0f} µs per record (whole run {1e6 * whole / records:.0f})"
             if node is not None and whole is not None else "n/a"))
    print(f"  {'replay ceiling (same documents, read back)':<42}{ceiling.seconds:>8.2f}{'':>8}"
          f"{ceiling.docs_per_s:>11,.0f} docs/s; {ceiling.docs:,} documents; node CPU {ceiling.node_cpu_s:.1f} s = "
          f"{1e6 * ceiling.node_cpu_s / ceiling.docs * sent / records:.0f} µs per record; tried {ceiling.tried}")
    ratio = rate / ceiling.docs_per_s
    chain = (records / first["wall"]) / bare_rate
    bounds(first, step["cpu"], node, ceiling, sent, records, bare_rate)
    print(f"  goals (issue 32): index step >= 0.85x the ceiling ({ratio:.2f}x: {met(ratio >= 0.85)}); the chain with "
          f"the index >= 0.25x bare normalize ({chain:.2f}x: {met(chain >= 0.25)})")


def bounds(first: dict[str, Any], step_cpu: float, node: float | None, ceiling: Any, sent: int, records: int,
           bare_rate: float) -> None:
    """What the machine's cores allow whatever the packing: the step cannot end before its client CPU
    (``step_cpu``) and the node's CPU, over the cores, have been spent; nor the chain before every step's CPU and
    the node's. Printed at the node CPU the step cost (``node``) and at the replay's (the node's best for these
    documents)."""
    cores = os.cpu_count() or 1
    best_node = ceiling.node_cpu_s * sent / ceiling.docs
    steps_cpu = sum(fig["cpu"] for fig in first["steps"].values())
    parts = []
    for label, node_s in (("at the step's node CPU", node), ("at the replay's", best_node)):
        if node_s is None:
            continue
        step_floor = (step_cpu + node_s) / cores
        chain_floor = (steps_cpu + node_s) / cores
        parts.append(f"{label}: step >= {step_floor:.2f} s = at most {sent / step_floor / ceiling.docs_per_s:.2f}x "
                     f"the ceiling, chain >= {chain_floor:.2f} s = at most {records / chain_floor / bare_rate:.2f}x bare")
    print(f"  bound on {cores} cores ((client CPU + node CPU) / cores, perfectly packed): " + "; ".join(parts))
