"""``<platform>/discovery_candidates``: the chats each tenant's records name, as candidates for a person to approve
(``crawl-assets discover approve``). A thin shell over ``crawl_assets.pipeline.discovery``: one table per tenant,
computed from that tenant's records alone; the UI shows the most named candidates not yet registered."""

import dagster as dg

from crawl_assets.core import catalog
from crawl_assets.core.display import shown
from crawl_assets.core.catalog import resolve
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS

SHOWN_ROWS = 25


def discovery_asset(platform: str) -> dg.AssetsDefinition:
    spec = catalog.spec(platform).discovery
    assert spec is not None, platform

    @dg.asset(key=[platform, "discovery_candidates"], group_name=platform, deps=[dg.AssetKey([platform, RECORDS])],
              kinds={"json"}, description=f"Chats the {platform} records of each tenant name (forwards, links, "
              "mentions): candidates a person approves into the registry with `crawl-assets discover approve`; "
              "nothing is collected from them before.")
    def discovery_candidates(context: dg.AssetExecutionContext, lake: LakeResource,
                             registry: RegistryResource) -> dg.MaterializeResult:
        from crawl_assets.pipeline import discovery

        store, entries = lake.lake(), registry.load().entries
        references, candidate_of = resolve(spec.references), resolve(spec.registered)
        shown_rows: list[dg.TableRecord] = []
        counts: dict[str, int] = {}
        for tenant in store.tenants():
            table = discovery.refresh(store, tenant, platform, references)
            registered = {c for e in entries if e.tenant == tenant and e.platform == platform
                          and (c := candidate_of(e.identifier)) is not None}
            open_rows = [r for r in discovery.with_registry(table, registered) if not r["registered"]]
            counts[tenant] = len(open_rows)
            shown_rows += [dg.TableRecord({
                "tenant": tenant, "candidate": shown(r["candidate"]), "label": shown(r["label"]), "count": r["count"],
                "forward": r["forward"], "link": r["link"], "mention": r["mention"],
                "first_seen": r["first_seen"] or "", "last_seen": r["last_seen"] or "",
                "sources": shown(", ".join(r["sources"])),
            }) for r in open_rows[:SHOWN_ROWS]]
        context.log.info(f"{platform} discovery: {sum(counts.values())} open candidates in {len(counts)} tenants")
        columns = [dg.TableColumn(name, "integer" if name in ("count", "forward", "link", "mention") else "string")
                   for name in ("tenant", "candidate", "label", "count", "forward", "link", "mention", "first_seen",
                                "last_seen", "sources")]
        return dg.MaterializeResult(metadata={
            "open_candidates": sum(counts.values()),
            "open_candidates_by_tenant": dg.MetadataValue.json(counts),
            "candidates": dg.MetadataValue.table(shown_rows, schema=dg.TableSchema(columns=columns)),
        })

    return discovery_candidates
