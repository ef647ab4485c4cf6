"""Parent side of the crash harness: run the child sync (optionally armed with a kill point), re-run it
until done, and take a comparable snapshot of what a sync left in the lake and the index.

A snapshot leaves out only what differs between two correct runs by construction: when an item was
collected, by which run, from which raw file and line (``provenance.collected_at/run_id/raw_pointer/
raw_line``), and the collection-delay bits of the index version. Everything else must be equal.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE
from crawl_assets.pipeline.relate.stage import TABLE as EDGES_TABLE
from crawl_assets.index.naming import decompose, observation_version
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.registry import SourceEntry, update_registry
from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.es_node.inspect import all_docs

TENANT = "acme"
X_KEY = f"{TENANT}.x.tl"
TG_KEY = f"{TENANT}.telegram.chan"
VOLATILE_PROVENANCE = ("collected_at", "run_id", "raw_pointer", "raw_line")


def sources(x_page_size: int = 20) -> list[SourceEntry]:
    """An X timeline (one page per raw batch) and a Telegram channel.

    Thread completion stays off: what it fetches depends on how a sync is split across runs (see
    test_split_invariance.py), so no recovery could equal a clean run with it on.
    """
    return [
        SourceEntry(name="tl", tenant=TENANT, platform="x", kind="account_timeline", identifier="data_eng",
                    options={"max_results": x_page_size, "pages_per_batch": 1}),
        SourceEntry(name="chan", tenant=TENANT, platform="telegram", kind="channel", identifier="@chaos",
                    policy={"refresh_window": 100}),
    ]


@dataclass
class ChildRun:
    returncode: int
    fired: list[str]
    status: dict[str, Any]
    stderr: str

    @property
    def killed(self) -> bool:
        return self.returncode == -signal.SIGKILL

    @property
    def done(self) -> bool:
        return self.returncode == 0 and all(s["complete"] for s in self.status.values())


class ForkServer:
    """The zygote process (``zygote.py``): forks one child sync per request."""

    def __init__(self, log_dir: Path):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CRAWL_FAULT_", "DAGSTER_PG"))}
        env["PYTHONPATH"] = str(REPO)
        self.stderr_path = log_dir / "zygote.err"
        self._err = self.stderr_path.open("ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "crawl_assets_tests.faults.zygote"], cwd=REPO, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, text=True)
        self._answer(timeout=120)

    def _answer(self, timeout: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            raise AssertionError(f"fork server gave no answer within {timeout}s: {self.stderr_tail()}")
        return json.loads(line)

    def stderr_tail(self, n: int = 4000) -> str:
        self._err.flush()
        return self.stderr_path.read_bytes()[-n:].decode(errors="replace")

    def run(self, config: Path, kill: str | None, log: Path, timeout: float) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"config": str(config), "kill": kill, "log": str(log)}) + "\n")
        self.proc.stdin.flush()
        return int(self._answer(timeout)["returncode"])

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._err.close()


@dataclass
class SyncWorld:
    """One lake + instance + registry + index, synced by child processes against shared stand-ins."""

    root: Path
    x_url: str
    es_url: str  # the node, or a fault proxy in front of it
    server: ForkServer | None  # None: run the sync in this process (outage tests: faults are armed here)
    telegram_messages: int = 900
    x_pages_per_run: int = 6
    telegram_pages_per_run: int = 4
    keys: tuple[str, ...] = (X_KEY, TG_KEY)
    lake_url: str = ""  # the lake's root when not the local folder root/lake (an s3:// URL)
    telegram_newest_at: str = "2026-01-15T12:00:00+00:00"
    runs: list[ChildRun] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        if not self.registry.exists():
            update_registry(self.registry, lambda reg: [reg.add(s) for s in sources()])

    @property
    def registry(self) -> Path:
        return self.root / "sources.yaml"

    @property
    def lake(self) -> Lake:
        return Lake(self.lake_url or str(self.root / "lake"))

    def config(self) -> Path:
        cfg = {
            "home": str(self.root / "home"), "lake": self.lake.root, "registry": str(self.registry),
            "x_url": self.x_url, "es_url": self.es_url, "status": str(self.root / "status.json"),
            "sources": list(self.keys), "x_pages_per_run": self.x_pages_per_run,
            "telegram_pages_per_run": self.telegram_pages_per_run,
            "telegram_channels": {"chaos": self.telegram_messages}, "telegram_newest_at": self.telegram_newest_at,
        }
        path = self.root / "child.json"
        path.write_text(json.dumps(cfg))
        return path

    def run(self, kill: str | None = None, timeout: float = 300) -> ChildRun:
        """One child sync; ``kill`` = ``site@n`` arms that kill point (see ``killpoints.SITES``)."""
        fired_log = self.root / "fired.log"
        fired_log.unlink(missing_ok=True)
        status_path = self.root / "status.json"
        status_path.unlink(missing_ok=True)
        if self.server is None:
            from crawl_assets_tests.faults import child

            assert kill is None, "kill points need the fork server"
            try:
                code = child.main(str(self.config()))
            except Exception:  # noqa: BLE001 - e.g. the instance's database went away mid-run
                code = 1
        else:
            code = self.server.run(self.config(), kill, fired_log, timeout)
        fired = fired_log.read_text().split() if fired_log.exists() else []
        status = json.loads(status_path.read_text()) if status_path.exists() else {}
        tail = self.server.stderr_tail() if self.server and code not in (0, -signal.SIGKILL) else ""
        run = ChildRun(code, fired, status, tail)
        self.runs.append(run)
        return run

    def run_kill_chain(self, chain: list[str]) -> list[str]:
        """One child sync per kill point of ``chain`` (``site@n``); the points that fired (each killed its run)."""
        fired = []
        for spec in chain:
            run = self.run(kill=spec)
            assert run.returncode in (0, 1, -9), run.stderr
            if run.killed:
                assert run.fired == [spec], (spec, run.fired)
                fired.append(spec)
        return fired

    def run_until_done(self, max_runs: int = 20) -> ChildRun:
        for _ in range(max_runs):
            run = self.run()
            if run.done:
                return run
            if run.returncode not in (0, 1):
                raise AssertionError(f"child crashed without a kill point: rc={run.returncode}\n{run.stderr}")
        raise AssertionError(f"not done after {max_runs} runs: {self.runs[-1].status}\n{self.runs[-1].stderr}")


# -- snapshots ------------------------------------------------------------------------------------

def stable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what legitimately differs between two correct collections of the same data."""
    out = dict(record)
    out["provenance"] = {k: v for k, v in (record.get("provenance") or {}).items() if k not in VOLATILE_PROVENANCE}
    return out


@dataclass
class Snapshot:
    records: dict[str, dict[str, Any]]  # key -> stable latest record (lake)
    edges: set[tuple[Any, ...]]
    index_records: dict[str, dict[str, Any]]  # _id -> stable source
    index_edit_versions: dict[str, int]  # _id -> edit-time part of the external version
    index_edges: set[str]
    problems: list[str]  # invariants broken inside this one snapshot (must be empty)


def take_snapshot(lake: Lake, es: Elasticsearch, keys: tuple[str, ...] = (X_KEY, TG_KEY)) -> Snapshot:
    """Latest record per key and edges from the lake; every document of the tenant from the index."""
    problems: list[str] = []
    latest: dict[str, dict[str, Any]] = {}
    edges: set[tuple[Any, ...]] = set()
    for key in keys:
        tenant, platform, _ = key.split(".", 2)
        raw_ids = {b.manifest.batch_id for b in lake.raw_batches(tenant, platform, key)}
        part_ids = set()
        for batch_id, table in lake.read_parts(RECORDS_TABLE, tenant, platform, key):
            part_ids.add(batch_id)
            rows = list(arrow_to_records(table))
            dups = [k for k, n in Counter(r["key"] for r in rows).items() if n > 1]
            if dups:
                problems.append(f"{key}: part {batch_id} holds duplicate keys {dups[:5]}")
            for row in rows:
                latest[row["key"]] = row
        if raw_ids != part_ids:
            problems.append(f"{key}: raw batches without a normalized part: {sorted(raw_ids - part_ids)[:5]}; "
                            f"parts without a raw batch: {sorted(part_ids - raw_ids)[:5]}")
        for _, table in lake.read_parts(EDGES_TABLE, tenant, platform, key):
            edges |= {(e["type"], e["src"], e["dst"], e["created_at"]) for e in arrow_to_records(table)}
    index_records: dict[str, dict[str, Any]] = {}
    versions: dict[str, int] = {}
    index_edges = set(all_docs(es, f"crawl-edges-{TENANT}"))
    for doc_id, hit in all_docs(es, f"crawl-records-{TENANT}").items():  # (an id in two indices raises)
        index_records[doc_id] = stable(hit.source)
        versions[doc_id] = decompose(hit.version)[0]
        lake_row = latest.get(doc_id)
        if lake_row is not None and hit.version != observation_version(lake_row):
            problems.append(f"index: {doc_id} has version {hit.version}, the lake's latest observation "
                            f"{observation_version(lake_row)}")
    return Snapshot({k: stable(v) for k, v in latest.items()}, edges, index_records, versions, index_edges, problems)


def differences(got: Snapshot, want: Snapshot) -> list[str]:
    """What differs between a snapshot and the clean run's (empty when they converge)."""
    out = list(got.problems)
    for label, a, b in (("lake records", got.records, want.records), ("index records", got.index_records,
                                                                      want.index_records)):
        missing, extra = sorted(set(b) - set(a)), sorted(set(a) - set(b))
        if missing:
            out.append(f"{label}: {len(missing)} missing (gaps), e.g. {missing[:5]}")
        if extra:
            out.append(f"{label}: {len(extra)} extra, e.g. {extra[:5]}")
        changed = [k for k in set(a) & set(b) if a[k] != b[k]]
        if changed:
            k = changed[0]
            diff = {f: (a[k].get(f), b[k].get(f)) for f in set(a[k]) | set(b[k]) if a[k].get(f) != b[k].get(f)}
            out.append(f"{label}: {len(changed)} differ, e.g. {k}: {diff}")
    if got.index_edit_versions != want.index_edit_versions:
        bad = [k for k in want.index_edit_versions if got.index_edit_versions.get(k) != want.index_edit_versions[k]]
        out.append(f"index versions differ for {len(bad)} documents, e.g. {bad[:5]}")
    if set(got.records) != set(got.index_records):
        out.append("the index does not hold exactly the lake's keys")
    if got.edges != want.edges:
        out.append(f"edges: {len(want.edges - got.edges)} missing, {len(got.edges - want.edges)} extra")
    if got.index_edges != want.index_edges:
        out.append(f"index edges: {len(want.index_edges - got.index_edges)} missing, "
                   f"{len(got.index_edges - want.index_edges)} extra")
    return out


def now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()
