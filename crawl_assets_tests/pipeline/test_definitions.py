import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg

from crawl_assets_tests.conftest import REPO


def test_import_raises_no_deprecation_warning():
    out = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", "import crawl_assets.definitions"],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )
    assert out.returncode == 0, out.stderr[-2000:]


def test_dg_check_defs_passes():
    dg_bin = Path(sys.executable).with_name("dg")
    cmd = [str(dg_bin)] if dg_bin.exists() else [shutil.which("dg") or "dg"]
    out = subprocess.run([*cmd, "check", "defs"], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]


def test_lineage_raw_normalized_edges_index_per_platform():
    from crawl_assets.definitions import defs

    graph = defs.resolve_asset_graph()
    for platform, raw in (("telegram", "telegram_messages_raw"), ("x", "x_posts_raw")):
        chain = [raw, "normalized_records", "relation_edges", "search_index"]
        for upstream, downstream in zip(chain, chain[1:]):
            parents = graph.get(dg.AssetKey([platform, downstream])).parent_keys
            assert dg.AssetKey([platform, upstream]) in parents, f"{platform}: {upstream} → {downstream}"
        partitions = {graph.get(dg.AssetKey([platform, name])).partitions_def.name for name in chain}
        assert partitions == {f"{platform}_sources"}


def test_sync_jobs_run_in_process_and_only_the_configured_pair_is_defined(monkeypatch):
    from crawl_assets.definitions import build_definitions

    for url, kept, left_out in ((None, "_no_index", ""), ("http://127.0.0.1:9", "", "_no_index")):
        if url:
            monkeypatch.setenv("CRAWL_ES_URL", url)  # configured, never contacted
        names = {job.name for job in build_definitions().resolve_all_job_defs()}
        for platform in ("telegram", "x"):
            assert {f"{platform}_sync{kept}", f"{platform}_sync_batch{kept}"} <= names
            assert not {f"{platform}_sync{left_out}", f"{platform}_sync_batch{left_out}"} & names, "one pair per platform"
        defs = build_definitions()
        for name in ("telegram_sync", "x_sync", "x_sync_batch"):
            assert defs.resolve_job_def(name + kept).executor_def.name == "in_process"
        assert len([n for n in names if not n.startswith("__")]) <= 22, sorted(names)  # was 33 (issue 31)


def test_an_empty_platform_reads_as_such_in_the_catalog(tmp_path, monkeypatch):
    from crawl_assets.definitions import build_definitions

    registry = tmp_path / "sources.yaml"
    registry.write_text("sources:\n  - {name: news, tenant: acme, platform: x, kind: account_timeline, identifier: a}\n")
    monkeypatch.setenv("CRAWL_REGISTRY", str(registry))
    defs = build_definitions()

    def description(*path: str) -> str:
        key = dg.AssetKey(list(path))
        return defs.resolve_assets_def(key).specs_by_key[key].description or ""

    for name in ("sources", "discourse_posts_raw", "normalized_records", "relation_edges", "search_index"):
        text = description("discourse", name)
        assert text.startswith("**No discourse sources were registered")
        assert "`crawl-assets sources add --platform discourse --kind forum --identifier <forum URL>" in text
        key = dg.AssetKey(["discourse", name])
        assert defs.resolve_assets_def(key).group_names_by_key[key] == "discourse"
    assert not description("x", "x_posts_raw").startswith("**No")
    assert "crawl-assets sources add --platform x" in description("x", "x_posts_raw")  # every raw asset says how
