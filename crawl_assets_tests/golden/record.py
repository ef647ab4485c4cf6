"""Golden recorder: what the project produces, as canonical files, to compare two trees byte for byte.

usage (from the repository root, in its virtualenv)::

    python -m crawl_assets_tests.golden.record OUT_DIR [--no-es] [--only PART,...]

``GOLDEN_EXTRA_FIXTURES=DIR`` adds every file ``DIR/<format>--<tag>`` to the normalized inputs.

Black box only, so the recorder itself never needs to change while the code behind it is rearranged:
the ``crawl-assets`` command, the one ``Definitions`` object (``crawl_assets.definitions:defs``, its public
Dagster API), files in the lake, documents in a real Elasticsearch node, and the HTTP stand-ins of the
tests driven through environment variables as a user would. Parts:

- ``normalize``: ``crawl-assets normalize --jobs 1`` and ``--jobs 2`` over every fixture and sample (and
  damaged variants: gzip, truncated gzip, BOM, another format): records, edges, exit code, stderr;
- ``schema``: ``crawl-assets schema record|edge|rejection``;
- ``demo``: ``crawl-assets demo`` in a fresh home: every table, quarantine, raw digests; with a node also
  every index document (``_index``, ``_id``, ``_version``, ``_source``);
- ``live``: two syncs of each REST/X source against its stand-in through ``<platform>_sync_no_index``: raw
  lines, manifests, checkpoints in saving order, materialization and check metadata, tables;
- ``defs``: the names an instance keeps history on (asset keys, checks, partitions, jobs, ops, sensors,
  schedules, resource keys).

Volatile values are replaced (batch and run ids, collection times, durations, lags, the normalizer version
hash, temporary paths). ``OUT_DIR/SHA256SUMS`` lists every artifact; compare two of them with ``diff -r``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "crawl_assets.cli.main"]
BATCH = re.compile(r"\d{8}T\d{12}Z-[0-9a-z]{1,12}-\d{4}")
VERSION = re.compile(r"\d+\.\d+\.\d+\+[0-9a-f]{12}")
LOOPBACK = re.compile(r"127\.0\.0\.1:\d+")
RUN_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
VOLATILE_KEYS = {"run_id", "collected_at", "duration_seconds", "cursor_age_seconds", "newest_event_lag_seconds",
                 "newest_event_lag_hours", "newest_item_age_days", "not_posts_files",
                 "cursor_lag_seconds", "pacing_wait_seconds", "last_sync_at", "reset_by_run", "failed_run",
                 "retrieved_at", "observed_at", "received_at", "rate_limit_wait_seconds", "anchor", "forward_from",
                 "preview", "last_batch", "path", "quarantine_files", "file", "expires_at", "sync_started_at", "floor",
                 "sha256", "_version", "history_starts", "last_complete_at", "started"}
HOMES: list[str] = []


def canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def scrub(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: ("<volatile>" if k in VOLATILE_KEYS else scrub(v)) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [scrub(v) for v in o]
    if hasattr(o, "isoformat"):
        return o.isoformat()
    if isinstance(o, bytes):
        return scrub(o.decode("utf-8", "replace"))
    if isinstance(o, str):
        if o[:1] in "{[":
            try:
                return scrub(json.loads(o))
            except ValueError:
                pass
        return scrub_text(o)
    return o


def scrub_text(text: str) -> str:
    for home in HOMES:
        text = text.replace(home, "<home>")
    text = LOOPBACK.sub("<loopback>", text)
    return RUN_ID.sub("<run>", VERSION.sub("<version>", BATCH.sub("<batch>", text)))


class Out:
    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def rows(self, name: str, rows: list[Any], *, keep_order: bool = False) -> None:
        lines = [canon(scrub(r)) for r in rows]
        (self.root / f"{name}.jsonl").write_text("".join(line + "\n" for line in (lines if keep_order else sorted(lines))))

    def text(self, name: str, text: str) -> None:
        (self.root / name).write_text(scrub_text(text))

    def sums(self) -> str:
        body = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n"
                       for p in sorted(self.root.iterdir()) if p.name != "SHA256SUMS")
        (self.root / "SHA256SUMS").write_text(body)
        return body


def run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, cwd=REPO)


# -- normalize --------------------------------------------------------------------------------------------

def fixtures(work: Path) -> list[tuple[str, str, Path]]:
    """(tag, format, file): every golden input and sample, and damaged variants of a few."""
    out = [(f"{p.parent.parent.name}", p.parent.parent.name, p)
           for p in sorted((REPO / "crawl_assets_tests/sources").glob("*/golden/input.jsonl"))]
    play_csv = REPO / "crawl_assets_tests/sources/play/golden/export.csv"
    samples = REPO / "crawl_assets/sample_data"
    out += [("play-csv", "play-csv", play_csv),
            ("telegram-export", "telegram-export", samples / "telegram_export/result.json"),
            ("x-v2", "x-v2", samples / "x_v2_recording.jsonl"),
            ("x-archive", "x-archive", samples / "x_archive_tweets.js")]
    seeds = work / "seeds"
    seeds.mkdir(exist_ok=True)
    x = (samples / "x_v2_recording.jsonl").read_bytes()
    damaged = {
        "x-v2.gz": gzip.compress(x, mtime=0),
        "x-v2.truncated.gz": gzip.compress(x, mtime=0)[: len(gzip.compress(x, mtime=0)) // 2],
        "x-v2.bom": b"\xef\xbb\xbf" + x,
        "x-v2.broken-lines": x.replace(b"\n", b"\n{broken\n", 3),
    }
    for name, data in damaged.items():
        (seeds / name).write_bytes(data)
        out.append((name, "x-v2", seeds / name))
    (seeds / "discourse-as-x").write_bytes((REPO / "crawl_assets_tests/sources/discourse/golden/input.jsonl").read_bytes())
    out.append(("discourse-as-x", "x-v2", seeds / "discourse-as-x"))
    extra = os.environ.get("GOLDEN_EXTRA_FIXTURES")  # files named ``<format>--<tag>`` (e.g. the fuzz seeds, written once)
    for path in sorted(Path(extra).iterdir()) if extra else ():
        fmt, _, tag = path.name.partition("--")
        out.append((f"extra.{tag}", fmt, path))
    return out


def record_normalize(out: Out, work: Path) -> None:
    for tag, fmt, path in fixtures(work):
        for jobs in ("1", "2"):
            edges_file = work / f"edges-{tag}-{jobs}.jsonl"
            r = run(["normalize", "--format", fmt, "--jobs", jobs, "--relations-out", str(edges_file), str(path)])
            recs = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
            edges = [json.loads(line) for line in edges_file.read_text().splitlines()] if edges_file.exists() else []
            name = f"normalize.{tag}.j{jobs}"
            out.rows(name + ".records", recs, keep_order=True)
            out.rows(name + ".edges", edges)
            out.text(name + ".exit", f"{r.returncode}\n{r.stderr.replace(str(work), '<work>').replace(str(REPO), '<repo>')}")


def record_schema(out: Out) -> None:
    for what in ("record", "edge", "rejection"):
        r = run(["schema", "--model", what])
        out.text(f"schema.{what}.json", f"{r.returncode}\n{r.stdout}{r.stderr}")


# -- demo ---------------------------------------------------------------------------------------------

def parquet_rows(lake: Path, table: str) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = []
    for part in sorted(lake.glob(f"tables/{table}/**/*.parquet")):
        meta = pq.read_schema(part).metadata or {}
        for row in pq.read_table(part).to_pylist():
            rows.append({"_part": str(part.relative_to(lake)), "_deriver": (meta.get(b"crawl_assets.deriver") or b"").decode(),
                         **row})
    return rows


def lake_files(out: Out, prefix: str, lake: Path) -> None:
    for table in ("normalized_records", "relation_edges", "hashtag_cooccurrence", "author_hashtag"):
        out.rows(f"{prefix}.table.{table}", parquet_rows(lake, table))
    q = []
    for f in sorted(lake.glob("quarantine/**/*.jsonl")):
        q += [{"_file": str(f.relative_to(lake)), **json.loads(line)} for line in f.read_text().splitlines() if line.strip()]
    out.rows(f"{prefix}.quarantine", q)
    raw, manifests = [], []
    for f in sorted(lake.glob("raw/**/*.jsonl.gz")):
        data = gzip.open(f).read()
        text = "\n".join(canon(scrub(line.decode("utf-8", "replace"))) for line in data.splitlines())
        raw.append({"file": str(f.relative_to(lake)), "digest": hashlib.sha256(text.encode()).hexdigest(),
                    "lines": data.count(b"\n")})
    for f in sorted(lake.glob("raw/**/*.meta.json")):
        manifests.append({"file": str(f.relative_to(lake)), **json.loads(f.read_text())})
    out.rows(f"{prefix}.raw", raw)
    out.rows(f"{prefix}.manifests", manifests)
    others = sorted(str(p.relative_to(lake)) for p in lake.rglob("*") if p.is_file()
                    and p.parts[len(lake.parts)] not in ("raw", "tables", "quarantine"))
    out.rows(f"{prefix}.other_files", [{"file": f} for f in others])


def index_documents(url: str) -> list[dict[str, Any]]:
    import httpx

    with httpx.Client(base_url=url, timeout=60) as es:
        es.post("/_refresh")
        docs: list[dict[str, Any]] = []
        resp = es.post("/_search?scroll=1m", json={"size": 1000, "sort": ["_doc"], "version": True,
                                                  "query": {"match_all": {}}}).json()
        while resp["hits"]["hits"]:
            docs += [{"_index": h["_index"], "_id": h["_id"], "_version": h.get("_version"), "_source": h["_source"]}
                     for h in resp["hits"]["hits"] if not h["_index"].startswith(".")]
            resp = es.post("/_search/scroll", json={"scroll": "1m", "scroll_id": resp["_scroll_id"]}).json()
        aliases = es.get("/_alias").json()
        templates = es.get("/_index_template").json().get("index_templates", [])
    docs.append({"_aliases": {k: sorted(v.get("aliases", {})) for k, v in aliases.items() if not k.startswith(".")}})
    docs.append({"_templates": sorted(t["name"] for t in templates)})
    return docs


def record_demo(out: Out, work: Path, es_url: str | None) -> None:
    for label, url in (("demo", None), ("demo_es", es_url)):
        if label == "demo_es" and not url:
            continue
        home = work / label
        HOMES.append(str(home))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CRAWL_", "DAGSTER_"))}
        env["DAGSTER_HOME"] = str(home)
        args = ["demo", "--home", str(home)] + (["--es-url", url] if url else [])
        r = run(args, env)
        out.text(f"{label}.exit", f"{r.returncode}\n")
        lake_files(out, label, home / "lake")
        if url:
            out.rows(f"{label}.index", index_documents(url))


def main(argv: list[str]) -> int:
    target = Path(argv[0]).resolve()
    if target.exists():
        shutil.rmtree(target)
    out = Out(target)
    parts = set((argv[argv.index("--only") + 1]).split(",")) if "--only" in argv else \
        {"normalize", "schema", "demo", "live", "defs"}
    work = Path(tempfile.mkdtemp(prefix="golden-work-"))
    HOMES.append(str(work))
    node = None
    try:
        if "defs" in parts:
            from crawl_assets_tests.golden.live import record_defs

            record_defs(out, work)
        if "normalize" in parts:
            record_normalize(out, work)
        if "schema" in parts:
            record_schema(out)
        if "live" in parts:
            from crawl_assets_tests.golden.live import record_live

            record_live(out, work)
        if "demo" in parts:
            es_url = None
            if "--no-es" not in argv:
                sys.path.insert(0, str(REPO))
                from crawl_assets_tests.es_node.node import RealNode

                node = RealNode().start()
                es_url = node.url
            record_demo(out, work, es_url)
    finally:
        if node is not None:
            node.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(out.sums(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
