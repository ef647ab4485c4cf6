"""What the two-machine test needs: a deployment (one instance database, one lake prefix in S3, one registry
object in S3, the shared Elasticsearch node), run workers started as pods are (own empty working folder, no
shared disk), a Hacker News stand-in that records what it served, and snapshots of the lake and the index
to compare deployments by content."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry, update_registry
from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.shared.s3_server import BUCKET
from crawl_assets_tests.sources.hackernews.standin import HackerNewsServer, Request, make_items

TENANT = "pods"
PLATFORM = "hackernews"
# written by the pipeline at each run (times, batch and run ids), not by what was collected
VOLATILE = {"fetched_at", "retrieved_at", "collected_at", "indexed_at", "ingested_at", "normalized_at",
            "batch_id", "run_id", "raw_batch", "raw_path", "provenance", "lineage"}


def source_items(n: int) -> list[dict[str, Any]]:
    """``n`` stories with two comments each; story ``i`` and its comments, and nothing else, match ``pod{i}x``."""
    items = make_items(n, 2)
    story = -1
    for item in items:
        if "story" in item["_tags"]:
            story += 1
            item["title"] = f"Show HN: pod{story:03d}x"
        else:
            item["comment_text"] = f"<p>re pod{story:03d}x</p>" + item["comment_text"]
    return items


def keys_of(n: int) -> list[str]:
    return [f"{TENANT}.{PLATFORM}.q{i:03d}" for i in range(n)]


def register(location: str, n: int) -> None:
    def add_all(reg) -> None:
        for i in range(n):
            reg.add(SourceEntry(name=f"q{i:03d}", tenant=TENANT, platform=PLATFORM, kind="search_query",
                                identifier=f"pod{i:03d}x"))
    update_registry(location, add_all)


class CountingHN(HackerNewsServer):
    """The stand-in, recording each answer: (monotonic time, query, object ids served)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.served: list[tuple[float, str, list[str]]] = []

    def route(self, req: Request) -> Any:
        reply = super().route(req)
        if reply.status == 200:
            self.served.append((time.monotonic(), req.arg("query") or "", [h["objectID"] for h in reply.body["hits"]]))
        return reply

    def queries(self) -> set[str]:
        return {q for _, q, _ in self.served}

    def span(self, query: str) -> tuple[float, float]:
        times = [t for t, q, _ in self.served if q == query]
        return min(times), max(times)

    def ids(self) -> Counter[str]:
        return Counter(i for _, _, ids in self.served for i in ids)


@dataclass
class Deployment:
    """One deployment's shared services: its Postgres database, lake prefix and registry object."""

    pg_url: str
    s3_env: dict[str, str]
    es_env: dict[str, str]
    lake: str = field(default_factory=lambda: f"s3://{BUCKET}/pods-{uuid.uuid4().hex[:8]}/lake")
    registry: str = field(default_factory=lambda: f"s3://{BUCKET}/pods-{uuid.uuid4().hex[:8]}/sources.yaml")

    def env(self, home: Path, source_url: str) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("CRAWL_", "DAGSTER_"))}
        return {**keep, **self.s3_env, **self.es_env, "DAGSTER_HOME": str(home), "DAGSTER_PG_URL": self.pg_url,
                "CRAWL_LAKE": self.lake, "CRAWL_REGISTRY": self.registry, "CRAWL_HACKERNEWS_BASE_URL": source_url,
                "PYTHONPATH": str(REPO)}


class Worker:
    """A run worker in its own process and empty working folder (its DAGSTER_HOME gets the instance config
    only, as a pod's image carries dagster.yaml)."""

    def __init__(self, folder: Path, deployment: Deployment, source_url: str, keys: list[str]):
        folder.mkdir(parents=True)
        shutil.copyfile(REPO / "dagster.yaml", folder / "dagster.yaml")
        self.folder = folder
        self.log = (folder.parent / f"{folder.name}.log").open("w+")
        self.proc = subprocess.Popen([sys.executable, "-m", "crawl_assets_tests.shared.sync_worker", PLATFORM, *keys],
                                     cwd=folder, env=deployment.env(folder, source_url), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)

    def wait_started(self) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        assert line == "started", f"worker did not start ({line!r}): {self.tail()}"

    def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def finish(self, timeout: float = 600) -> str:
        out, _ = self.proc.communicate(timeout=timeout)
        return out

    def tail(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-4000:]

    def files(self) -> list[str]:
        """What the worker left in its folder but Dagster's own captured step output (its local compute log
        manager's ``storage/<run id>/compute_logs/``: logs, which a deployment sends elsewhere through
        dagster.yaml's ``compute_logs``)."""
        left = sorted(str(p.relative_to(self.folder)) for p in self.folder.rglob("*") if p.is_file() or p.is_symlink())
        return [f for f in left if not re.fullmatch(r"storage/[0-9a-f-]{36}/compute_logs/[a-z]+\.(out|err|complete)", f)]


def run_together(workers: list[Worker]) -> None:
    """Start them at one moment (as the pods of one scheduler tick), once each has loaded Dagster."""
    for w in workers:
        w.wait_started()
    for w in workers:
        w.go()


def _plain(row: dict[str, Any]) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in row.items() if k not in VOLATILE))


def lake_snapshot(url: str, n: int) -> dict[str, Any]:
    """Per source: the raw hits' ids (each batch counted), the normalized records and relation edges (without
    the pipeline's own times and ids), order-independent."""
    lake = Lake(url)
    out: dict[str, Any] = {}
    for key in keys_of(n):
        tables = {}
        for table in ("normalized_records", "relation_edges"):
            rows = [r for _, part in lake.read_parts(table, TENANT, PLATFORM, key) for r in part.to_pylist()]
            tables[table] = sorted(_plain(r) for r in rows)
        tables["raw_batches"] = len(lake.raw_batches(TENANT, PLATFORM, key))
        out[key] = tables
    return out


def index_snapshot(client: Any) -> dict[str, tuple]:
    """Every document of the tenant by id (without the pipeline's own times), whatever index holds it."""
    from elasticsearch import helpers

    client.indices.refresh(index=f"crawl-*-{TENANT}*")
    docs = {}
    for hit in helpers.scan(client, index=f"crawl-*-{TENANT}*", query={"query": {"match_all": {}}}):
        family = hit["_index"].split(f"-{TENANT}")[0]
        docs[f"{family}/{hit['_id']}"] = _plain(hit["_source"])
    return docs
