"""The relate stage: a source's edges and co-occurrence tables brought up to date with its normalized parts."""

from crawl_assets.pipeline.relate.delta import refresh_relations
from crawl_assets.pipeline.stage import Check, MetadataPath, StageContext, StageReport


def run_relate(platform: str, ctx: StageContext) -> StageReport:
    """The relate stage: the source's edges and co-occurrence tables, brought up to date with its parts."""
    tenant = ctx.source.split(".", 1)[0]
    done = refresh_relations(ctx.lake, tenant, platform, ctx.source)
    # each edge file is checked against its part's keys when written; unchanged files keep their result
    by_type = done.inputs.edges_by_type
    return StageReport(
        metadata={
            "mode": done.mode,
            "new_parts": done.new_parts,
            "edges": sum(by_type.values()),
            **{f"edges_{t}": int(n) for t, n in sorted(by_type.items())},
            **{f"{name}_rows": n for name, n in done.inputs.summary_rows.items()},
            "records": done.inputs.records,
            "path": MetadataPath(ctx.lake.url(done.part)),
        },
        checks=[Check("edge_sources_exist", not done.inputs.orphans,
                      {"orphan_sources": done.inputs.orphans, "examples": done.inputs.orphan_examples})],
    )
