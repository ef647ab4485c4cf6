"""bench/api.py's export comparison: the whole live set exported as JSON lines through the API and read with
``elasticsearch.helpers.scan`` in its own process (same fields), interleaved rounds, records/s, CPU seconds and
peak RSS side by side (same count and keys asserted); then a Parquet export through the API with its peak RSS
per quarter of the export (flat when it streams in bounded memory), and a CSV export the same way.

``python bench/api_exports.py --peer-export --es-url URL`` is the helpers.scan side (its own process, so its
RSS is its own); bench/api.py runs it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import orjson
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from api_requests import ALIAS, TENANT  # noqa: E402

def _digest(keys_seen: int, acc: int, key: str) -> tuple[int, int]:
    """An order-free digest of a set of keys: their count and the sum of their 64-bit hashes."""
    return keys_seen + 1, (acc + int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big")) % 2**64



class PeakRss:
    """Samples a process's RSS (children included) every 50 ms while in a ``with`` block."""

    def __init__(self, pid: int) -> None:
        self.proc, self.peak, self._done = psutil.Process(pid), 0, threading.Event()
        self.samples: list[int] = []

    def _sample(self) -> None:
        while not self._done.is_set():
            try:
                rss = sum(p.memory_info().rss for p in [self.proc, *self.proc.children(True)])
            except psutil.NoSuchProcess:
                return
            self.peak = max(self.peak, rss)
            self.samples.append(rss)
            time.sleep(0.05)

    def quarters(self) -> str:
        """Peak RSS in each quarter of the block (MiB): flat when the export streams in bounded memory."""
        n = len(self.samples)
        parts = [self.samples[i * n // 4:(i + 1) * n // 4] for i in range(4)] if n >= 4 else []
        return " / ".join(f"{max(p) / 2**20:,.0f}" for p in parts if p)

    def __enter__(self) -> "PeakRss":
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()


def cpu_seconds(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system + t.children_user + t.children_system


def api_export(api_url: str, key: str, server_pid: int, es_pid: int | None, fmt: str) -> dict:
    from crawl_assets.query.exports import DEFAULT_FIELDS

    es_cpu, cpu, mine = cpu_seconds(es_pid), cpu_seconds(server_pid), resource.getrusage(resource.RUSAGE_SELF)
    count, acc, size, header, lines = 0, 0, 0, None, 0
    with PeakRss(server_pid) as rss:
        began = time.perf_counter()
        with httpx.stream("GET", f"{api_url}/v1/exports/records", params={"format": fmt, "order": "index"},
                          headers={"Authorization": f"Bearer {key}"}, timeout=600) as resp:
            resp.raise_for_status()
            header = json.loads(resp.headers["X-Crawl-Query"])
            if fmt == "jsonl":
                for line in resp.iter_lines():
                    lines += 1
                    row = orjson.loads(line)
                    if "_export" not in row:
                        count, acc = _digest(count, acc, row["key"])
            else:
                for chunk in resp.iter_bytes():
                    size += len(chunk)
        took = time.perf_counter() - began
    assert header["fields"] == list(DEFAULT_FIELDS)
    if fmt == "jsonl":
        assert lines == header["records"] + 1 == count + 1, (lines, header["records"], count)
    return {"records": header["records"], "seconds": took, "rss_mib": rss.peak / 2**20, "digest": acc, "bytes": size,
            "quarters": rss.quarters(),
            "cpu": cpu_seconds(server_pid) - cpu + _cpu(resource.getrusage(resource.RUSAGE_SELF)) - _cpu(mine),
            "es_cpu": cpu_seconds(es_pid) - es_cpu}


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def peer_export(es_url: str) -> None:
    """``--peer-export``: every live record of the tenant with ``helpers.scan``, the API export's fields; prints
    its figures as JSON (run in its own process, so its RSS is its own)."""
    from elasticsearch import Elasticsearch, helpers

    from crawl_assets.query.exports import DEFAULT_FIELDS
    from crawl_assets.query.filters import scoped_query

    es = Elasticsearch(es_url, request_timeout=120)
    count, acc = 0, 0
    began = time.perf_counter()
    for hit in helpers.scan(es, index=ALIAS, query={"query": scoped_query(TENANT)}, size=5000,
                            _source=list(DEFAULT_FIELDS), scroll="2m"):
        count, acc = _digest(count, acc, hit["_source"]["key"])
    took = time.perf_counter() - began
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"records": count, "seconds": took, "digest": acc, "rss_mib": usage.ru_maxrss / 1024,
                      "cpu": usage.ru_utime + usage.ru_stime}))


def _peer_round(es_url: str, es_pid: int | None) -> dict:
    es_cpu = cpu_seconds(es_pid)
    out = subprocess.run([sys.executable, __file__, "--peer-export", "--es-url", es_url], capture_output=True,
                         text=True, check=True, cwd=REPO)
    peer = json.loads(out.stdout.strip().splitlines()[-1])
    peer["es_cpu"] = cpu_seconds(es_pid) - es_cpu
    return peer


def compare_exports(api_url: str, key: str, server_pid: int, es_url: str, es_pid: int | None, rounds: int) -> bool:
    """``rounds`` interleaved rounds (helpers.scan, then the API); every round's figures and the medians."""
    runs: dict[str, list[dict]] = {"helpers.scan, own process": [], "API JSON lines, server": []}
    for _ in range(rounds):
        peer = _peer_round(es_url, es_pid)
        mine = api_export(api_url, key, server_pid, es_pid, "jsonl")
        assert peer["records"] > 0, "helpers.scan read nothing: no baseline"
        assert (mine["records"], mine["digest"]) == (peer["records"], peer["digest"]), \
            f"the API exported {mine['records']} records, helpers.scan read {peer['records']} (or other keys)"
        runs["helpers.scan, own process"].append(peer)
        runs["API JSON lines, server"].append(mine)
    records = runs["API JSON lines, server"][0]["records"]
    print(f"\nexport of the same {records:,} records (same keys, checked each round), {rounds} interleaved rounds, "
          f"load average {os.getloadavg()[0]:.2f}; both sides decode every record on the client side (CPU: the API's "
          "server + this client; helpers.scan's process):")
    medians = {}
    for label, rs in runs.items():
        for r in rs:
            print(f"  {label:<28} {r['records'] / r['seconds']:>9,.0f} records/s  {r['seconds']:>6.1f} s  "
                  f"CPU {r['cpu']:>6.1f} s (+ Elasticsearch {r['es_cpu']:.1f} s)  peak RSS {r['rss_mib']:,.0f} MiB")
        medians[label] = {k: statistics.median(r[k] for r in rs) for k in ("seconds", "cpu", "es_cpu", "rss_mib")}
    peer, mine = medians["helpers.scan, own process"], medians["API JSON lines, server"]
    print(f"  medians: API / helpers.scan = {peer['seconds'] / mine['seconds']:.2f}x the rate (wall), "
          f"{(peer['cpu'] + peer['es_cpu']) / (mine['cpu'] + mine['es_cpu']):.2f}x (CPU seconds, Elasticsearch's "
          f"included); API {records / mine['seconds']:,.0f} records/s, server peak RSS {mine['rss_mib']:,.0f} MiB")
    ok = records / mine["seconds"] >= 20_000 and mine["rss_mib"] <= 200
    print("goal: >= 20,000 records/s and <= 200 MiB server RSS: " + ("MET" if ok else "NOT MET"))
    print(f"  API JSON lines server RSS by quarter of the last export: {runs['API JSON lines, server'][-1]['quarters']} MiB")
    parquet = api_export(api_url, key, server_pid, es_pid, "parquet")
    print(f"  API Parquet (no peer run)   {parquet['records'] / parquet['seconds']:>9,.0f} records/s  "
          f"{parquet['bytes'] / 2**20:,.0f} MiB  peak RSS {parquet['rss_mib']:,.0f} MiB (by quarter: {parquet['quarters']})")
    shared = shared_mib(server_pid)
    print(f"  of the server's RSS after the exports, {shared:,.0f} MiB are shared pages (libraries mapped from files: "
          "libarrow, libparquet, Python's own), the rest anonymous memory")
    ok_parquet = parquet["rss_mib"] <= 200
    print("goal for Parquet: <= 200 MiB server RSS: " + ("MET" if ok_parquet else "NOT MET"))
    csv = api_export(api_url, key, server_pid, es_pid, "csv")
    print(f"  API CSV (no peer run)       {csv['records'] / csv['seconds']:>9,.0f} records/s  "
          f"{csv['bytes'] / 2**20:,.0f} MiB  peak RSS {csv['rss_mib']:,.0f} MiB (by quarter: {csv['quarters']})")
    return ok and ok_parquet and csv["rss_mib"] <= 200


def shared_mib(pid: int) -> float:
    return psutil.Process(pid).memory_info().shared / 2**20


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="helpers.scan side of bench/api.py's export comparison")
    parser.add_argument("--peer-export", action="store_true")
    parser.add_argument("--es-url", required=True)
    peer_export(parser.parse_args().es_url)
