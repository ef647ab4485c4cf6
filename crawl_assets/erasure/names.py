"""Find who carries a display name or handle (``crawl-assets erase --author-name``): a name is not an
identity (two people may share "Joe"), so the matches are listed for a person to confirm, and each is
then erased by its stable ``author_id`` (or, for records without one, by record key)."""

from __future__ import annotations

from crawl_assets.pipeline.normalize import TABLE as RECORDS_TABLE
from crawl_assets.lake import Lake


def records_named(lake: Lake, tenant: str, name: str) -> tuple[dict[tuple[str, str], tuple[str, int]], set[str]]:
    """({(platform, author_id): (handle, records)}, keys of matching records without an author id)."""
    wanted = name.lstrip("@").casefold()
    authors: dict[tuple[str, str], tuple[str, int]] = {}
    keyless: set[str] = set()
    for platform, source in lake.tenant_sources(tenant):
        for _, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source,
                                        columns=["key", "author_id", "author_handle"]):
            for row in table.to_pylist():
                handle = row.get("author_handle") or ""
                if handle.lstrip("@").casefold() != wanted:
                    continue
                if row.get("author_id"):
                    key = (platform, str(row["author_id"]))
                    authors[key] = (handle, authors.get(key, (handle, 0))[1] + 1)
                else:
                    keyless.add(row["key"])
    return authors, keyless
