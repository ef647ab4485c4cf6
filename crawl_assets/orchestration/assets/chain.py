"""Each platform's chain of assets, built from its source spec: raw → normalized_records → relation_edges →
search_index (the derived ones are platform-independent), each a thin Dagster shell over its pipeline stage.

* ``normalized_records``: every raw batch of a source → records in the public schema (Parquet), over the
  normalize stage (``pipeline/normalize/stage.py``), adding a preview of the records written: when, in which
  language and of which kind the newest records are, and the per-language and per-kind counts. The Dagster
  instance (its event log) is not erased by ``crawl-assets erase``, so nothing that names a person or a record
  goes into it (never a record's key, an author's handle or id, nor text: read those in the lake or the index,
  where erasure reaches). The preview is a Markdown table kept under 1,000 characters, the size the Dagster UI
  renders inline in the materialization's metadata (a longer one hides behind a "Show Markdown" button).
* ``relation_edges``: reply, quote, repost, mention and hashtag edges of a source, plus its hashtag
  co-occurrence and author–hashtag participation tables, over the relate stage (``pipeline.relate``): with no
  new normalized part the step reads and writes no table and says so (``mode``: ``up_to_date``); appended parts
  get their own edge files and their counts added (``incremental``); anything else rebuilds (``full``).
* ``search_index``: the source's records and edges in Elasticsearch, over the index stage
  (``pipeline/index/stage.py``).

The steps of a source's chain are plain functions, run by the asset itself and by the batch op alike. A step
is ``step(env) -> MaterializeResult | None`` (``None``: an optional output not materialized; the step logged
why). ``StepEnv`` holds what a step may use of the run it runs in, taken from public context
attributes only: in an asset run from the asset's own context, in a batch run from the batch op's context
with the source's partition and the step's asset key. Nothing re-enters Dagster's step machinery. Each
derived step runs its plain stage (``pipeline/stage.py``) with ``run_stage``: its context from the step's env,
its report turned into a ``MaterializeResult`` with its checks, its notes on the source shown on the raw
partition.
"""

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import AbstractSet, Any

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.core import catalog
from crawl_assets.lake import Lake
from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
from crawl_assets.orchestration.partition_state import materialize_with_checks, source_check
from crawl_assets.pipeline.index import MISSING_CLUSTER
from crawl_assets.pipeline.normalize.stage import MAX_REJECTED_SHARE, TABLE as RECORDS
from crawl_assets.pipeline.normalize.stage import run_normalize
from crawl_assets.pipeline.relate.stage import run_relate
from crawl_assets.pipeline.relate.stage import TABLE as EDGES
from crawl_assets.pipeline.stage import MetadataPath, StageContext, StageReport


@dataclass(frozen=True)
class StepEnv:
    """One step of one source: the run (``run.run_id``, ``run.tags``, ``run.parent_run_id``), the instance,
    the log, the resources, and which asset, partition and checks the step materializes."""

    run: dg.DagsterRun
    instance: dg.DagsterInstance
    log: Any  # DagsterLogManager
    resources: Any
    log_event: Callable[[Any], None]
    asset_key: dg.AssetKey
    partition_key: str
    selected_asset_check_keys: AbstractSet[dg.AssetCheckKey]
    retry_number: int = 0

    @classmethod
    def of_asset(cls, context: dg.AssetExecutionContext) -> "StepEnv":
        """The env of an asset's own run (its retries counted)."""
        return cls(run=context.run, instance=context.instance, log=context.log, resources=context.resources,
                   log_event=context.log_event, asset_key=context.asset_key, partition_key=context.partition_key,
                   selected_asset_check_keys=context.selected_asset_check_keys, retry_number=context.retry_number)

    @classmethod
    def in_batch(cls, context: dg.OpExecutionContext, asset_key: dg.AssetKey, partition_key: str,
                 check_keys: AbstractSet[dg.AssetCheckKey]) -> "StepEnv":
        """The env of one source's step inside a batch op (a batch is never retried as a whole)."""
        return cls(run=context.run, instance=context.instance, log=context.log, resources=context.resources,
                   log_event=context.log_event, asset_key=asset_key, partition_key=partition_key,
                   selected_asset_check_keys=check_keys)


StepFn = Callable[[StepEnv], "dg.MaterializeResult | None"]


def derived_assets(platform: str, raw: dg.AssetsDefinition, *, cluster_configured: bool = True) -> list[dg.AssetsDefinition]:
    """raw → normalized_records → relation_edges → search_index for one platform.

    ``cluster_configured``: whether an Elasticsearch cluster is configured; without one the index asset
    says so in its description and carries no checks (its step then succeeds without materializing)."""
    normalized = build_normalized_records(platform, raw)
    edges = build_relation_edges(platform, normalized)
    return [normalized, edges, build_search_index(platform, normalized, edges, cluster_configured=cluster_configured)]


def derived_steps(platform: str) -> dict[dg.AssetKey, StepFn]:
    """The plain function behind each derived asset, by asset key (the batch op runs them too)."""
    return {
        dg.AssetKey([platform, RECORDS]): normalized_records_step(platform),
        dg.AssetKey([platform, EDGES]): relation_edges_step(platform),
        dg.AssetKey([platform, "search_index"]): search_index_step(platform),
    }


@cache
def raw_step(platform: str) -> StepFn:
    """The plain function behind the raw asset of ``platform`` (the batch op runs it too)."""
    from crawl_assets.orchestration.raw_step import build_raw_step
    from crawl_assets.sdk.sync import live_collector

    spec = catalog.spec(platform)
    return build_raw_step(spec, live_collector(spec))


@cache
def raw_asset(platform: str) -> dg.AssetsDefinition:
    """The raw asset of ``platform`` (one per process, so its identity is stable)."""
    from crawl_assets.orchestration.raw_step import build_raw_asset

    return build_raw_asset(catalog.spec(platform), raw_step(platform))


def normalized_records_step(platform: str) -> StepFn:
    return partial(run_normalized_records, platform)


def build_normalized_records(platform: str, raw: dg.AssetsDefinition) -> dg.AssetsDefinition:
    key = dg.AssetKey([platform, RECORDS])
    return stage_asset(
        key, run_normalized_records, deps=[raw.key], kinds={"pandas", "parquet"}, resources={"lake"},
        description=f"{platform} records in the public schema (docs/SCHEMA.md), one Parquet part per raw batch.",
        checks=[
            source_check(platform, "no_duplicate_keys", key, blocking=True,
                         description="Each part holds one record per key (latest observation wins)."),
            source_check(platform, "records_match_schema", key, blocking=True,
                         description="Every stored row is a valid Record: built typed by construction (the "
                                     "path the fuzz tests hold equal to pydantic validation, as the CLI's), "
                                     "and a row changed after (an edit resolved, a tombstone merged) "
                                     "read back and validated as stored."),
            source_check(platform, "no_failed_batches", key, blocking=False,
                         description="No batch failed normalization and at most "
                                     f"{MAX_REJECTED_SHARE:.0%} of the items read were rejected; a source over "
                                     "it is degraded (an error, not blocking: the other batches are stored; the "
                                     "first reason in the result, all in the quarantine files)."),
        ])


def stage_asset(key: dg.AssetKey, run: Callable[[str, StepEnv], "dg.MaterializeResult | None"], *,
                deps: Sequence[dg.AssetKey], kinds: set[str], resources: set[str], description: str,
                checks: Sequence[dg.AssetCheckSpec], keyed: bool = False, skippable: bool = False
                ) -> dg.AssetsDefinition:
    """The thin shell of a derived step: one source partition of ``key`` materialized by ``run``, with its
    checks. ``keyed``: the result names ``key`` (the index step's optional output)."""
    platform, table = key.path

    @dg.multi_asset(
        name=f"{platform}__{table}",
        specs=[dg.AssetSpec(key, deps=deps, partitions_def=SOURCE_PARTITIONS[platform], group_name=platform,
                            kinds=kinds, description=description, skippable=skippable)],
        check_specs=list(checks),
        can_subset=True,
        required_resource_keys=resources,
    )
    def _step(context: dg.AssetExecutionContext) -> Iterator[Any]:
        yield from materialize_with_checks(context, run(platform, StepEnv.of_asset(context)), key if keyed else None)

    return _step


def run_normalized_records(platform: str, env: StepEnv) -> dg.MaterializeResult | None:
    """The normalize stage for the step's source, with a preview of the records it wrote."""
    return run_stage(platform, env, run_normalize, metadata=with_preview)


def with_preview(ctx: StageContext, report: StageReport) -> dict[str, Any]:
    """The report's metadata with the preview of the parts written, after the record count."""
    tenant, platform, _ = ctx.source.split(".", 2)
    preview = preview_metadata(ctx.lake, tenant, platform, ctx.source, RECORDS, report.extra["parts"])
    items = list(report.metadata.items())
    at = next(i for i, (k, _) in enumerate(items) if k == "records_written") + 1
    return {**dict(items[:at]), **preview, **dict(items[at:])}


PREVIEW_COLUMNS = ["created_at", "lang", "kind", "deleted"]  # no key, author or text: see above
PREVIEW_ROWS = 5
INLINE_LIMIT = 1000  # the UI renders shorter Markdown inline
PREVIEW_READ_ROWS = 65_536  # rows read at a time


def _cell(value: Any) -> str:
    text = " ".join(str(value if value is not None else "").split())
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("_", "\\_") or "-"


def preview_table(rows: Sequence[dict[str, Any]], limit: int = INLINE_LIMIT) -> str:
    """Markdown: time, lang, kind and state of up to ``PREVIEW_ROWS`` rows, newest first."""
    header = "| time | lang | kind | state |\n|---|---|---|---|\n"
    lines = []
    for row in sorted(rows, key=lambda r: str(r.get("created_at") or ""), reverse=True)[:PREVIEW_ROWS]:
        when = row.get("created_at")
        when = when.strftime("%Y-%m-%dT%H:%MZ") if hasattr(when, "strftime") else str(when or "")
        state = "deleted" if row.get("deleted") else "live"
        lines.append(f"| {_cell(when)} | {_cell(row.get('lang'))} | {_cell(row.get('kind'))} | {state} |\n")
    while lines and len(header) + sum(map(len, lines)) >= limit:
        lines.pop()
    return header + "".join(lines)


def newest_rows(part: pa.Table) -> pa.Table:
    """The rows ``preview_table`` shows, picked in Arrow (a 100k-row part is never turned into dicts): newest
    first, rows without a time last (as their empty text sorts), ties in part order (both sorts are stable)."""
    order = pc.sort_indices(part, sort_keys=[("created_at", "descending")])  # nulls at the end
    return part.take(order[:PREVIEW_ROWS])


def preview_metadata(lake: Lake, tenant: str, platform: str, source: str, table: str,
                     written: Sequence[str]) -> dict[str, Any]:
    """``records_by_lang`` and ``records_by_kind`` of the parts ``written`` this sync, and a preview of the
    newest part written (or, when nothing new was written, of the source's newest part)."""
    langs: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    # counted in Arrow a record batch at a time (a part of a million rows never becomes Python strings), each
    # value counted in order of first appearance, as a Counter fed row by row counts them
    for batch_id in written:
        part = lake.table_part(table, tenant, platform, source, batch_id)
        if not lake.exists(part):
            continue
        for rows in lake.iter_part_batches(part, columns=["lang", "kind"], batch_size=PREVIEW_READ_ROWS):
            for counts, column, default in ((langs, "lang", "unknown"), (kinds, "kind", None)):
                for entry in pc.value_counts(rows.column(column)).to_pylist():
                    counts[(entry["values"] or default) if default else entry["values"]] += entry["counts"]
    newest = max(written) if written else max(lake.part_ids(table, tenant, platform, source), default=None)
    rows: list[dict[str, Any]] = []
    if newest is not None and lake.exists(lake.table_part(table, tenant, platform, source, newest)):
        # the newest rows of each record batch, then of those: the same rows as of the whole part (stable sorts)
        part = lake.table_part(table, tenant, platform, source, newest)
        picked = [newest_rows(pa.Table.from_batches([batch]))
                  for batch in lake.iter_part_batches(part, columns=PREVIEW_COLUMNS, batch_size=PREVIEW_READ_ROWS)]
        rows = newest_rows(pa.concat_tables(picked)).to_pylist() if picked else []
    meta: dict[str, Any] = {
        "records_by_lang": dg.MetadataValue.json(dict(langs.most_common())),
        "records_by_kind": dg.MetadataValue.json(dict(kinds.most_common())),
    }
    if rows:
        intro = f"Newest records of batch `{newest}`" + ("" if newest in written else " (written by an earlier sync)")
        meta["preview"] = dg.MetadataValue.md(f"{intro}:\n\n" + preview_table(rows, INLINE_LIMIT - len(intro) - 3))
    return meta


def relation_edges_step(platform: str) -> StepFn:
    return partial(run_relation_edges, platform)


def build_relation_edges(platform: str, normalized: dg.AssetsDefinition) -> dg.AssetsDefinition:
    key = dg.AssetKey([platform, EDGES])
    return stage_asset(
        key, run_relation_edges, deps=[normalized.key], kinds={"pandas", "parquet"}, resources={"lake"},
        description=f"Relations between {platform} records (reply, quote, repost, mention, hashtag) and "
                    "co-occurrence tables, for one source.",
        checks=[source_check(platform, "edge_sources_exist", key, blocking=True,
                             description="Every edge starts at a record of this source.")])


def run_relation_edges(platform: str, env: StepEnv) -> dg.MaterializeResult | None:
    """The relate stage for the step's source."""
    return run_stage(platform, env, run_relate)


def index_checks(platform: str, key: dg.AssetKey) -> list[dg.AssetCheckSpec]:
    return [
        source_check(platform, "no_unaccounted_failures", key, blocking=True,
                     description="Every document sent was indexed, a no-op, or dead-lettered."),
        source_check(platform, "index_count_matches", key,
                     description="Live documents of the source in the index = its non-deleted records."),
    ]


def run_search_index(platform: str, env: StepEnv) -> dg.MaterializeResult | None:
    """The index stage, imported when it runs: the Elasticsearch client and the index modules (~26 MiB) load
    in the index step, not with the definitions."""
    from crawl_assets.pipeline.index.stage import run_index

    return run_stage(platform, env, run_index, cluster=env.resources.elasticsearch, keyed=True)


def search_index_step(platform: str) -> StepFn:
    return partial(run_search_index, platform)


def build_search_index(platform: str, normalized: dg.AssetsDefinition, edges: dg.AssetsDefinition, *,
                       cluster_configured: bool = True) -> dg.AssetsDefinition:
    """The index asset. Its output is optional: without a cluster the step logs why and what to set,
    succeeds, and the asset stays unmaterialized (no failed run, no red partition). Its checks are
    declared only when a cluster is configured, so an index that cannot run shows no checks rather
    than checks that read as passed."""
    key = dg.AssetKey([platform, "search_index"])
    description = f"{platform} records and edges of one source in Elasticsearch (per-tenant monthly indices)."
    if not cluster_configured:
        description += f"\n\nNot materialized: {MISSING_CLUSTER}."

    return stage_asset(key, run_search_index, deps=[normalized.key, edges.key], kinds={"elasticsearch"},
                       resources={"lake", "elasticsearch"}, description=description, keyed=True, skippable=True,
                       checks=index_checks(platform, key) if cluster_configured else [])


def stage_context(env: StepEnv, *, cluster: Any = None) -> StageContext:
    return StageContext(lake=env.resources.lake.lake(), source=env.partition_key, run_id=env.run.run_id, log=env.log,
                        cluster=cluster, previous=lambda name: previous_value(env, name))


def run_stage(platform: str, env: StepEnv, stage: Callable[[str, StageContext], StageReport | None], *,
              cluster: Any = None, keyed: bool = False,
              metadata: Callable[[StageContext, StageReport], dict[str, Any]] | None = None
              ) -> dg.MaterializeResult | None:
    """``stage`` run for the step's source. ``keyed``: the result and its checks name the step's asset key;
    ``metadata``: the step's own metadata added to the report's (a Dagster-only view)."""
    ctx = stage_context(env, cluster=cluster)
    report = stage(platform, ctx)
    if report is None:
        return None
    if report.source_notes:
        env.log_event(dg.AssetObservation(asset_key=dg.AssetKey([platform, catalog.spec(platform).raw_asset]),
                                          partition=env.partition_key, metadata=report.source_notes))
    shown = metadata(ctx, report) if metadata is not None else report.metadata
    return materialize_result(report, shown, env.asset_key if keyed else None)


def materialize_result(report: StageReport, metadata: dict[str, Any], asset_key: dg.AssetKey | None
                       ) -> dg.MaterializeResult:
    return dg.MaterializeResult(
        asset_key=asset_key,
        metadata={k: dg.MetadataValue.path(v.path) if isinstance(v, MetadataPath) else v for k, v in metadata.items()},
        check_results=[dg.AssetCheckResult(check_name=c.name, asset_key=asset_key, passed=c.passed,
                                           metadata=c.metadata, description=c.description)
                       for c in report.checks],
    )


def previous_value(env: StepEnv, name: str) -> Any:
    """Metadata ``name`` of the partition's previous materialization of the step's asset (None without one)."""
    records = env.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=env.asset_key, asset_partitions=[env.partition_key]), limit=1).records
    if not records or records[0].asset_materialization is None:
        return None
    value = records[0].asset_materialization.metadata.get(name)
    return value.value if value is not None else None
