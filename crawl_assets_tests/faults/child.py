"""The program the crash harness runs (and kills): one sync of an X and a Telegram source, end to end.

``python -m crawl_assets_tests.faults.child CONFIG.json``: materializes raw → normalized_records →
relation_edges → search_index for each source in ``CONFIG["sources"]`` in the Dagster instance of
``CONFIG["home"]``, against the X stand-in at ``x_url``, a Telegram stand-in world built here (it is
deterministic: same messages every run) and the index at ``es_url``. Writes a status JSON
(``{"source key": {"success": bool, "complete": bool}}``) and exits 0 when every run succeeded.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any


def telegram_world(cfg: dict[str, Any]) -> Any:
    from crawl_assets_tests.standins import telegram_mtproto as tm

    world = tm.World()
    newest = datetime.fromisoformat(cfg["telegram_newest_at"])
    for name, messages in cfg["telegram_channels"].items():
        world.channel(name, messages=messages, newest_at=newest)
    tm.use(world)
    return world


def resources(cfg: dict[str, Any]) -> dict[str, Any]:
    from crawl_assets.orchestration.resources import ElasticsearchResource
    from crawl_assets.orchestration.resources import LakeResource, RegistryResource
    from crawl_assets.sources.telegram.resource import TelegramCredential, TelegramResource
    from crawl_assets.sdk.tenant_secrets import TenantSecret
    from crawl_assets.sources.x.resource import XResource
    from crawl_assets_tests.fakes import FAKE_API_HASH
    from crawl_assets_tests.sources.telegram.conftest import SESSION

    import dagster as dg

    tg_cred = TelegramCredential(api_id=dg.EnvVar("CRAWL_TELEGRAM_API_ID"),
                                 api_hash=dg.EnvVar("CRAWL_TELEGRAM_API_HASH"),
                                 session=dg.EnvVar("CRAWL_TELEGRAM_SESSION"))
    os.environ.setdefault("CRAWL_TELEGRAM_API_ID", "12345")
    os.environ.setdefault("CRAWL_TELEGRAM_API_HASH", FAKE_API_HASH)
    os.environ.setdefault("CRAWL_TELEGRAM_SESSION", SESSION)
    os.environ.setdefault("CRAWL_X_BEARER_TOKEN", "test-token")
    return {
        "lake": LakeResource(root=cfg["lake"]),
        "registry": RegistryResource(path=cfg["registry"]),
        "elasticsearch": ElasticsearchResource(hosts=[cfg["es_url"]], request_timeout=5, max_retries=1),
        "x": XResource(base_url=cfg["x_url"], secrets=[TenantSecret(tenant="acme", value=dg.EnvVar("CRAWL_X_BEARER_TOKEN"))],
                       max_pages_per_run=cfg["x_pages_per_run"], backoff_seconds=0.05, max_retries=3,
                       reset_margin_seconds=0.05, max_inline_wait_seconds=2.0),
        "telegram": TelegramResource(
            credentials={"acme:": tg_cred}, request_interval_seconds=0.0, network_backoff_seconds=0.01,
            account_wait_seconds=5.0, lock_dir=str(Path(cfg["home"]) / "locks"),
            max_pages_per_run=cfg["telegram_pages_per_run"], pages_per_checkpoint=1),
    }


def _complete(result: Any, platform: str) -> bool:
    for event in result.get_asset_materialization_events():
        mat = event.event_specific_data.materialization
        if mat.asset_key.path[-1].endswith("_raw"):
            meta = {k: v.value for k, v in mat.metadata.items()}
            return bool(meta.get("complete", meta.get("history_complete", False)))
    return False


def main(config_path: str) -> int:
    cfg = json.loads(Path(config_path).read_text())
    os.environ["DAGSTER_HOME"] = cfg["home"]
    home = Path(cfg["home"])
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():  # the project's instance (SQLite here: DAGSTER_PG_* are not passed on)
        (home / "dagster.yaml").write_bytes((Path(__file__).resolve().parents[2] / "dagster.yaml").read_bytes())
    import dagster as dg

    from crawl_assets.orchestration.assets import derived_assets, raw_asset

    telegram_world(cfg)
    res = resources(cfg)
    instance = dg.DagsterInstance.get()
    status: dict[str, Any] = {}
    quiet = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
    for key in cfg["sources"]:
        platform = key.split(".")[1]
        if key not in instance.get_dynamic_partitions(f"{platform}_sources"):
            instance.add_dynamic_partitions(f"{platform}_sources", [key])
        raw = raw_asset(platform)
        result = dg.materialize([raw, *derived_assets(platform, raw)], partition_key=key, instance=instance,
                                resources=res, raise_on_error=False, run_config=quiet)
        status[key] = {"success": result.success, "complete": _complete(result, platform), "run_id": result.run_id}
    Path(cfg["status"]).write_text(json.dumps(status))
    return 0 if all(s["success"] for s in status.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
