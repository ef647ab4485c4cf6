"""``retention``: deletes what the per-tenant retention policy (``retention.yaml``) no longer allows,
from the raw lake, the normalized tables (edges rebuilt) and the monthly indices; runs daily."""


from datetime import datetime, timezone

import dagster as dg

from crawl_assets.orchestration.resources import ElasticsearchResource, LakeResource


class RetentionConfig(dg.Config):
    now: str = ""  # ISO instant to enforce at; empty means the current time (tests advance the clock)
    policy_path: str = ""  # empty: CRAWL_RETENTION, else retention.yaml next to the registry


@dg.asset(group_name="maintenance", kinds={"parquet", "elasticsearch"},
          description="Per-tenant retention of raw batches, normalized parts and monthly indices (retention.yaml).")
def retention(context: dg.AssetExecutionContext, config: RetentionConfig, lake: LakeResource,
              elasticsearch: ElasticsearchResource) -> dg.MaterializeResult:
    # imported here: retention loads the index and erasure modules (and the Elasticsearch client) when it runs
    from crawl_assets.retention import enforce, load_policy

    now = datetime.fromisoformat(config.now) if config.now else datetime.now(timezone.utc)
    policy = load_policy(config.policy_path or None)
    client = elasticsearch.get_client() if elasticsearch.hosts else None
    try:
        report = enforce(lake.lake(), client, policy, now)
    finally:
        if client is not None:
            client.close()
    context.log.info(f"retention at {now.isoformat()}: {report.raw_batches_deleted} raw batches, "
                     f"{report.parts_deleted} parts, {len(report.indices_deleted)} indices deleted")
    return dg.MaterializeResult(metadata={
        "enforced_at": now.isoformat(), "tenants_with_policy": len(policy.tenants),
        "raw_batches_deleted": report.raw_batches_deleted, "parts_deleted": report.parts_deleted,
        "landed_events_deleted": report.landed_events_deleted,
        "deadletter_files_deleted": report.deadletter_files_deleted,
        "temp_files_deleted": report.temp_files_deleted,
        "indices_deleted": ", ".join(report.indices_deleted), "sources_touched": len(report.sources_touched),
        "index_enforced": client is not None,
    })


retention_job = dg.define_asset_job("retention_job", selection=[retention], executor_def=dg.in_process_executor)
retention_schedule = dg.ScheduleDefinition(job=retention_job, cron_schedule="30 3 * * *",
                                           default_status=dg.DefaultScheduleStatus.RUNNING)
