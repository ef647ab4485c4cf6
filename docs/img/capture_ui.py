"""Re-create the README's UI screenshots of a running deployment: a throw-away instance with a few synced X
sources (local stand-in), a backfill run by the daemon, dagster-webserver on 127.0.0.1, headless Chromium
(Debian package ``chromium``).

    python docs/img/capture_ui.py            # writes docs/img/{events,checks,backfills,sensors}.png

The newcomer's screenshots (lineage, partitions with a failing source, normalized_records' preview, plots)
are written by the browser test, ``crawl_assets_tests/ui/test_browser.py``, which asserts on those pages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
OUT = Path(__file__).resolve().parent
PAGES = {
    "events.png": "/assets/x/x_posts_raw?view=events&partition=acme.x.news",
    "checks.png": "/assets/x/sources?view=checks",
    "backfills.png": "/overview/backfills",
    "sensors.png": "/automation",
}
SOURCES = {"news": "persian_news", "eng": "data_eng", "dev": "shiraz_dev", "science": "open_science",
           "daily": "tehran_daily", "weekly": "py_weekly", "gone": "no_such_account"}


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="crawl_ui_"))
    home = tmp / "home"
    home.mkdir()
    shutil.copyfile(REPO / "dagster.yaml", home / "dagster.yaml")
    with (home / "dagster.yaml").open("a") as fh:
        fh.write("\nnux:\n  enabled: false\n")  # no welcome dialog over the screenshots
    env = {"DAGSTER_HOME": str(home), "CRAWL_LAKE": str(tmp / "lake"), "CRAWL_REGISTRY": str(tmp / "sources.yaml"),
           "CRAWL_X_BEARER_TOKEN__ACME": "test-token"}
    os.environ.update(env)
    os.environ.pop("DAGSTER_PG_URL", None)
    os.environ.pop("CRAWL_ES_URL", None)

    import dagster as dg

    from crawl_assets_tests.orchestration.conftest import x_registry
    from crawl_assets_tests.standins.x_api import XAPIServer
    from crawl_assets_tests.standins.x_corpus import build_corpus

    corpus = build_corpus(600, days=10, n_users=8)
    with XAPIServer(corpus) as server:
        os.environ["CRAWL_X_BASE_URL"] = env["CRAWL_X_BASE_URL"] = server.url
        x_registry(tmp / "sources.yaml", SOURCES)
        from crawl_assets.definitions import build_definitions

        defs = build_definitions()
        keys = [f"acme.x.{n}" for n in SOURCES]
        with dg.DagsterInstance.get() as instance:
            instance.add_dynamic_partitions("x_sources", keys)
            batch = defs.resolve_job_def("x_sync_batch_no_index")
            for round_ in range(3):  # a few syncs, so the plots have points
                if round_:
                    for user in ("persian_news", "data_eng", "tehran_daily"):
                        corpus.grow(corpus.user_by_name(user), 5 + 7 * round_)
                batch.execute_in_process(
                    run_config={"ops": {"x_sync_sources_no_index": {"config": {"partitions": keys}}}},
                    instance=instance, raise_on_error=False, tags={"crawl/platform": "x"})
            defs.resolve_job_def("source_health_checks").execute_in_process(instance=instance, raise_on_error=False)
        port = 3917
        web = subprocess.Popen([str(Path(sys.executable).parent / "dagster-webserver"), "-w", str(REPO / "workspace.yaml"),
                                "-h", "127.0.0.1", "-p", str(port)], cwd=REPO, env={**os.environ, **env},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        daemon = subprocess.Popen([str(Path(sys.executable).parent / "dagster-daemon"), "run", "-w", str(REPO / "workspace.yaml")],
                                  cwd=REPO, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        try:
            import httpx

            deadline = time.time() + 180
            while time.time() < deadline:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/server_info", timeout=3).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(1)
            query = """mutation($p: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $p) { __typename } }"""
            httpx.post(f"http://127.0.0.1:{port}/graphql", timeout=60, json={"query": query, "variables": {"p": {
                "assetSelection": [{"path": ["x", "x_posts_raw"]}, {"path": ["x", "normalized_records"]},
                                   {"path": ["x", "relation_edges"]}],
                "partitionNames": ["acme.x.news", "acme.x.eng"]}}})
            status = """query { partitionBackfillsOrError { ... on PartitionBackfills { results { status } } } }"""
            deadline = time.time() + 240  # let the daemon run the backfill, so the page shows it done
            while time.time() < deadline:
                body = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": status}, timeout=60).json()
                states = [r["status"] for r in body["data"]["partitionBackfillsOrError"].get("results", [])]
                if states and all(s not in ("REQUESTED", "CANCELING") for s in states):
                    break
                time.sleep(3)
            for name, path in PAGES.items():
                subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                                "--disable-sync", f"--user-data-dir={tmp / 'chromium'}", "--hide-scrollbars",
                                "--window-size=1600,1000", "--virtual-time-budget=20000", f"--screenshot={OUT / name}",
                                f"http://127.0.0.1:{port}{path}"], check=True, timeout=120,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                print(f"{name}: {(OUT / name).stat().st_size // 1024} KB")
        finally:
            for proc in (web, daemon):
                os.killpg(proc.pid, 15)
                proc.wait(30)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
