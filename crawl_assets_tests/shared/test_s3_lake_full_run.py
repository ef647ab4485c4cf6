"""The whole pipeline with the lake on S3 and the instance on Postgres, as a user runs it from the command
line: sync of the bundled export sources, normalize, edges, index into the real node (``crawl-assets demo``),
an erasure, a dead-letter replay and retention. Everything lands in S3 (through the real s3fs/botocore
clients, against a local moto server) and the index; the local working folder keeps nothing of ours but the
instance config the demo installs. The registry and the export files are the user's input, kept apart."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.shared.s3_server import s3_prefix

SEARCH = "demo.x.sample-search"


def run_cli(work: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", *args], capture_output=True, text=True,
                          timeout=900, env=env, cwd=work)
    assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink())


@pytest.mark.slow
def test_full_run_on_s3_and_postgres_leaves_no_local_state(tmp_path, s3_lake, s3_env, pg_url, es_cluster):
    work, user = tmp_path / "work", tmp_path / "user"  # the working folder; the user's registry and exports
    work.mkdir()
    user.mkdir()
    (user / "retention.yaml").write_text("tenants:\n  demo: {raw_days: 1}\n")
    env = {**os.environ, "DAGSTER_HOME": str(work / "home"), "DAGSTER_PG_URL": pg_url, "CRAWL_LAKE": s3_lake,
           "CRAWL_REGISTRY": str(user / "sources.yaml"), "CRAWL_IMPORT_ROOT": str(user / "imports"),
           "CRAWL_ES_URL": es_cluster.url, "PYTHONPATH": str(REPO),
           # a deployment of several machines shares the erasure log's key as a secret: no key file anywhere
           "CRAWL_ERASURE_KEY": "a shared erasure key of this deployment's machines, 32+ characters"}
    prefix = s3_prefix(s3_lake)

    demo = run_cli(work, env, "demo")
    assert f"lake          {s3_lake}" in demo.stdout
    keys = s3_env.keys(prefix)
    for area in ("raw/demo/x/", "raw/demo/telegram/", "tables/normalized_records/demo/",
                 "tables/relation_edges/demo/", "index_state/demo/"):
        assert any(k.startswith(f"{prefix}/{area}") for k in keys), (area, keys[:20])
    assert any(k.endswith(".meta.json") for k in keys) and not [k for k in keys if "/.tmp-" in k]
    es_cluster.client.indices.refresh(index="crawl-records-demo*")
    indexed = es_cluster.client.count(index="crawl-records-demo*", query={"term": {"source": SEARCH}})["count"]
    assert indexed > 0

    run_cli(work, env, "erase", "--tenant", "demo", "--source", SEARCH)
    keys = s3_env.keys(prefix)
    assert not [k for k in keys if f"/{SEARCH}/" in k and not k.startswith(f"{prefix}/erasure/")], keys
    assert any(k.startswith(f"{prefix}/erasure/demo/") for k in keys)  # the erasure log, in the lake too
    es_cluster.client.indices.refresh(index="crawl-records-demo*")
    assert es_cluster.client.count(index="crawl-records-demo*", query={"term": {"source": SEARCH}})["count"] == 0

    replay = run_cli(work, env, "es", "replay")
    assert "no pending dead letters" in replay.stdout

    retention = (
        "from datetime import datetime, timezone\n"
        "from elasticsearch import Elasticsearch\n"
        "from crawl_assets import settings\n"
        "from crawl_assets.lake import Lake\n"
        "from crawl_assets.retention import enforce, load_policy\n"
        f"client = Elasticsearch({es_cluster.url!r})\n"
        "report = enforce(Lake(settings.lake_root()), client, load_policy(), datetime(2100, 1, 1, tzinfo=timezone.utc))\n"
        "print('raw deleted', report.raw_batches_deleted)\n"
    )
    done = subprocess.run([sys.executable, "-c", retention], capture_output=True, text=True, env=env, cwd=work,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) > 0
    keys = s3_env.keys(prefix)
    assert not [k for k in keys if k.startswith(f"{prefix}/raw/")]  # raw expired...
    assert any(k.startswith(f"{prefix}/tables/normalized_records/demo/") for k in keys)  # ...its records kept

    # The working folder: the instance config the demo installed and Dagster's own captured step output
    # (its local compute log manager, storage/<run id>/compute_logs/: logs, which a deployment sends elsewhere
    # with dagster.yaml's compute_logs), nothing else: no lake, no lock file, no SQLite database, no cache.
    # Every state of ours is in Postgres, S3 or the index.
    left = files_under(work)
    dagster_logs = [f for f in left if re.fullmatch(r"home/storage/[0-9a-f-]{36}/compute_logs/[a-z]+\.(out|err|complete)", f)]
    assert dagster_logs, "the runs' step output was expected under DAGSTER_HOME"
    assert sorted(set(left) - set(dagster_logs)) == ["home/dagster.yaml"], "\n".join(left)
