"""Find who carries a display name or handle (``crawl-assets erase --author-name``): a name is not an
identity (two people may share "Joe"), so the matches are listed for a person to confirm, and each is
then erased by its stable ``author_id`` on its platform and site (or, for records without one, by record key)."""

from __future__ import annotations

from crawl_assets.erasure.authors import Author, author_of
from crawl_assets.lake import Lake
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE


def records_named(lake: Lake, tenant: str, name: str) -> tuple[dict[Author, tuple[str, int]], set[str]]:
    """({person (platform, author_id, site): (handle, records)}, keys of matching records without an author
    id the erasure can name)."""
    wanted = name.lstrip("@").casefold()
    authors: dict[Author, tuple[str, int]] = {}
    keyless: set[str] = set()
    for platform, source in lake.tenant_sources(tenant):
        for _, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source,
                                        columns=["key", "author_id", "author_handle"]):
            for row in table.to_pylist():
                handle = row.get("author_handle") or ""
                if handle.lstrip("@").casefold() != wanted:
                    continue
                author = author_of(platform, row)
                if author is not None:
                    authors[author] = (handle, authors.get(author, (handle, 0))[1] + 1)
                else:
                    keyless.add(row["key"])
    return authors, keyless
