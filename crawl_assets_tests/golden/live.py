"""Golden recorder, the parts that run Dagster: two syncs of each live source against its stand-in, and the
names of the one ``Definitions`` object (see ``record.py``)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

from crawl_assets_tests.golden.record import HOMES, REPO, Out, lake_files, run


# -- live syncs against the stand-ins --------------------------------------------------------------------

def _sync_twice(out: Out, work: Path, platform: str, entries: list[list[str]], env: dict[str, str]) -> None:
    home = work / f"live-{platform}"
    (home / "instance").mkdir(parents=True)
    HOMES.append(str(home))
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("CRAWL_", "DAGSTER_"))},
           "DAGSTER_HOME": str(home), "CRAWL_REGISTRY": str(home / "sources.yaml"), "CRAWL_LAKE": str(home / "lake"),
           "CRAWL_IMPORT_ROOT": str(home / "imports"), **env}
    keys = []
    for args in entries:
        r = run(["sources", "add", "--platform", platform, *args], env)
        out.text(f"live.{platform}.add.{args[args.index('--name') + 1]}", f"{r.returncode}\n{r.stdout}{r.stderr}")
        keys.append(f"{args[args.index('--tenant') + 1] if '--tenant' in args else 'default'}.{platform}."
                    f"{args[args.index('--name') + 1]}")
    script = f"""
import json, sys
import dagster as dg
from crawl_assets.definitions import defs
out = []
with dg.instance_for_test(temp_dir={str(home / 'instance')!r}) as instance:
    instance.add_dynamic_partitions("{platform}_sources", {keys!r})
    job = defs.resolve_job_def("{platform}_sync_no_index")
    for attempt in (1, 2):
        for key in {keys!r}:
            res = job.execute_in_process(partition_key=key, instance=instance, raise_on_error=False)
            mats = [{{"asset": e.asset_key.to_user_string(), "metadata": {{k: v.value for k, v in
                     e.event_specific_data.materialization.metadata.items()}}}}
                    for e in res.get_asset_materialization_events()]
            checks = [{{"check": e.event_specific_data.check_name, "passed": e.event_specific_data.passed,
                        "metadata": {{k: v.value for k, v in e.event_specific_data.metadata.items()}}}}
                      for e in res.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
            failures = [(e.event_specific_data.error.message if e.event_specific_data.error else e.message)
                        for e in res.all_events if e.event_type_value == "STEP_FAILURE"]
            out.append({{"attempt": attempt, "key": key, "success": res.success, "materializations": mats,
                         "checks": checks, "failures": failures}})
    raw_key = [k for k in defs.resolve_asset_graph().get_all_asset_keys() if k.path[0] == "{platform}"
               and k.path[1].endswith("_raw")][0]
    for key in {keys!r}:
        for r in instance.fetch_observations(dg.AssetRecordsFilter(asset_key=raw_key, asset_partitions=[key]),
                                             limit=1000, ascending=True).records:
            out.append({{"observation": key, "metadata": {{k: v.value for k, v in r.asset_observation.metadata.items()}}}})
json.dump(out, sys.stdout, default=str)
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO)
    try:
        rows = json.loads(r.stdout)
    except ValueError:
        rows = [{"error": r.stderr[-3000:]}]
    out.rows(f"live.{platform}.runs", rows, keep_order=True)
    lake = Path(env.get("CRAWL_LAKE") or home / "lake")
    lake_files(out, f"live.{platform}", lake)
    lines = []
    for f in sorted(lake.glob("raw/**/*.jsonl.gz")):
        lines += [{"file": str(f.relative_to(lake)), "n": n, "line": line.decode("utf-8", "replace")}
                  for n, line in enumerate(gzip.open(f).read().splitlines())]
    out.rows(f"live.{platform}.raw_lines", lines)


def record_live(out: Out, work: Path) -> None:
    from datetime import datetime, timedelta, timezone

    sys.path.insert(0, str(REPO))
    from crawl_assets.core import catalog
    from crawl_assets_tests.standins.discourse_api import DiscourseServer, build_forum
    from crawl_assets_tests.standins.intercom_api import IntercomServer, make_conversation
    from crawl_assets_tests.standins.play_api import PlayServer, make_review
    from crawl_assets_tests.standins.x_api import XAPIServer
    from crawl_assets_tests.standins.x_corpus import build_corpus

    start = datetime(2024, 3, 1, tzinfo=timezone.utc)
    if "hackernews" in catalog.platforms():  # a source type that may be uninstalled (docs/ADDING_A_SOURCE.md)
        from crawl_assets_tests.sources.hackernews.standin import HackerNewsServer, make_items

        with HackerNewsServer(items=make_items(12, 4, start=start)) as srv:
            _sync_twice(out, work, "hackernews", [
                ["--kind", "search_query", "--identifier", "feedback", "--name", "all", "--tenant", "acme",
                 "--history-horizon-days", "1500", "--option", "hits_per_page=7", "--option", "pages_per_batch=2"]],
                {"CRAWL_HACKERNEWS_BASE_URL": srv.url})
    with DiscourseServer(forum=build_forum(5, 12, start=start)) as srv:
        _sync_twice(out, work, "discourse", [
            ["--kind", "forum", "--identifier", srv.url, "--name", "meta", "--tenant", "acme",
             "--option", "pages_per_batch=2"]], {"CRAWL_DISCOURSE_BASE_URL": srv.url})
    convs = [make_conversation(100 + i, 1_709_251_200 + i * 3600, 1_709_251_200 + i * 5400, parts=1 + i % 3)
             for i in range(14)]
    with IntercomServer(workspaces={"tok": ("ws1", convs)}) as srv:
        _sync_twice(out, work, "intercom", [
            ["--kind", "workspace", "--identifier", "ws1", "--name", "support", "--tenant", "acme",
             "--option", "per_page=5"]],
            {"CRAWL_INTERCOM_BASE_URL": srv.url, "CRAWL_INTERCOM_ACCESS_TOKEN__ACME": "tok"})
    now = datetime(2025, 1, 10, tzinfo=timezone.utc)
    reviews = [make_review(f"gp:AOqp{i:04d}", now - timedelta(hours=5 * i), rating=1 + i % 5,
                           reply="ممنون" if i % 4 == 0 else None, lang="fa_IR" if i % 4 == 0 else "en",
                           text="\tبرنامه کند است" if i % 4 == 0 else "Crashes on start") for i in range(23)]
    with PlayServer(apps={"com.acme.app": reviews}, grants={"sa@acme.iam": {"com.acme.app"}}, now=lambda: now) as srv:
        key = json.dumps(srv.register("sa@acme.iam"))
        _sync_twice(out, work, "play", [
            ["--kind", "app", "--identifier", "com.acme.app", "--name", "app", "--tenant", "acme", "--credential", "main",
             "--interval-minutes", "360", "--option", "max_results=5", "--option", "pages_per_batch=2"]],
            {"CRAWL_PLAY_BASE_URL": srv.url, "CRAWL_PLAY_SERVICE_ACCOUNT_JSON__ACME__MAIN": key})
    corpus = build_corpus(300, days=10, now=datetime(2025, 1, 10, tzinfo=timezone.utc))
    with XAPIServer(corpus) as srv:
        handle = next(u["username"] for u in corpus.users.values() if u["username"] != "outsider")
        _sync_twice(out, work, "x", [
            ["--kind", "account_timeline", "--identifier", handle, "--name", "timeline", "--tenant", "acme",
             "--option", "complete_threads=true", "--option", "pages_per_batch=2", "--option", "max_results=20"]],
            {"CRAWL_X_BASE_URL": srv.url, "CRAWL_X_BEARER_TOKEN__ACME": "test-token"})


# -- definitions ------------------------------------------------------------------------------------------

DEFS_SCRIPT = r"""
import json, sys
import dagster as dg
from crawl_assets.definitions import defs
out = {}
graph = defs.resolve_asset_graph()
assets = {}
for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
    node = graph.get(key)
    pd = node.partitions_def
    assets[key.to_user_string()] = {
        "deps": sorted(k.to_user_string() for k in node.parent_keys),
        "partitions": getattr(pd, "name", None) if pd else None,
        "group": node.group_name, "kinds": sorted(node.kinds),
        "checks": sorted(c.name for c in node.check_keys),
        "pools": sorted(node.pools or []) if getattr(node, "pools", None) else [],
        "retry": repr(node.assets_def.op.retry_policy) if node.assets_def.is_executable else None,
        "op": node.assets_def.op.name if node.assets_def.is_executable else None,
        "description": node.description,
    }
out["assets"] = assets
out["jobs"] = {}
for job in sorted(defs.resolve_all_job_defs(), key=lambda j: j.name):
    out["jobs"][job.name] = {"ops": sorted(n.name for n in job.graph.node_defs), "tags": dict(job.tags),
                             "executor": job.executor_def.name, "description": job.description,
                             "config": sorted(str(k) for n in job.graph.node_defs if n.config_schema
                                              for k in (getattr(n.config_schema.config_type, "fields", {}) or {}))}
out["sensors"] = sorted([s.name, s.minimum_interval_seconds, str(s.default_status), s.description,
                         sorted(t.job_name for t in s.targets)] for s in defs.sensors)
out["schedules"] = sorted([s.name, s.cron_schedule, s.job_name, str(s.default_status)] for s in defs.schedules)
out["resources"] = sorted(defs.resources)
out["checks"] = sorted(k.to_user_string() for c in (defs.asset_checks or []) for k in c.check_keys)
json.dump(out, sys.stdout, indent=1, sort_keys=True, default=str)
"""


def record_defs(out: Out, work: Path) -> None:
    for label, extra in (("defs", {}), ("defs_es", {"CRAWL_ES_URL": "http://127.0.0.1:9"})):
        home = work / label
        home.mkdir()
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("CRAWL_", "DAGSTER_"))},
               "DAGSTER_HOME": str(home), **extra}
        r = subprocess.run([sys.executable, "-c", DEFS_SCRIPT], capture_output=True, text=True, env=env, cwd=REPO)
        out.text(f"{label}.json", r.stdout if r.returncode == 0 else f"FAILED\n{r.stderr[-3000:]}")
