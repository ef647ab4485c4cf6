"""Who an erasure by author is about: a person is an author id *on one platform* (and, where the platform's
ids are per site, on one site: a Discourse user id is one forum's), never a bare id: user 777 of X and
user 777 of a Discourse forum are different people.

Written ``{platform}:{id}`` (``x:777``, ``intercom:user:5f1c``) or ``{platform}:{site}:{id}`` for platforms
whose ``PersonIds.per_site`` is set (``discourse:forum.example.com:777``; the site is the record key's
second part). A bare id is resolved against the tenant's records by the CLI: used when exactly one
platform (and site) holds it, refused with the list of candidates otherwise.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from elasticsearch import Elasticsearch

from crawl_assets.core import catalog
from crawl_assets.erasure.scrub import persons_of
from crawl_assets.index.erasure import records_with_author_id
from crawl_assets.lake import Lake
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE

MAX_ID = 300


@dataclass(frozen=True, order=True)
class Author:
    """One person: ``author_id`` as their records carry it, on ``platform`` (and ``site``, when per site)."""

    platform: str
    author_id: str
    site: str | None = None

    def __post_init__(self) -> None:
        if not self.author_id.strip() or len(self.author_id) > MAX_ID or "\n" in self.author_id:
            raise ValueError(f"invalid author id {self.author_id!r}")
        if self.platform not in catalog.catalog().specs:
            raise ValueError(f"unknown platform {self.platform!r} (known: {', '.join(sorted(catalog.catalog().specs))})")
        per_site = persons_of(self.platform).per_site
        if per_site and not (self.site and ":" not in self.site and self.site.strip() == self.site):
            raise ValueError(f"{self.platform} author ids are per site: write {self.platform}:SITE:ID "
                             f"(SITE as in the records' keys, e.g. the forum's host)")
        if not per_site and self.site is not None:
            raise ValueError(f"{self.platform} author ids are not per site: write {self.platform}:ID")

    def __str__(self) -> str:
        return ":".join(p for p in (self.platform, self.site, self.author_id) if p is not None)

    @property
    def key_prefix(self) -> str:
        """What every key of this person's records starts with (their platform, and site)."""
        return f"{self.platform}:{self.site}:" if self.site is not None else f"{self.platform}:"

    def owns(self, record: Mapping[str, Any]) -> bool:
        """Whether a record (or an indexed document, a dead letter) is this person's: same ``author_id``, on
        the same platform (and site). Never a display name or handle."""
        return (str(record.get("author_id") or "") == self.author_id
                and str(record.get("key") or "").startswith(self.key_prefix))


def site_of(platform: str, key: str) -> str | None:
    """The site of a record key on a platform whose author ids are per site (else None)."""
    if not persons_of(platform).per_site:
        return None
    parts = key.split(":", 2)
    return parts[1] if len(parts) == 3 and parts[1] else None


def parse_author(text: str) -> Author | None:
    """``platform:id`` (``platform:site:id`` when per site) as an ``Author``; None for a bare id (its first part
    names no platform). ``ValueError`` when it names a platform but not the way that platform needs."""
    platform, sep, rest = text.partition(":")
    if not sep or platform not in catalog.catalog().specs:
        return None
    if persons_of(platform).per_site:
        site, sep, author_id = rest.partition(":")
        if not sep:
            raise ValueError(f"{platform} author ids are per site: write {platform}:SITE:ID, e.g. "
                             f"{platform}:forum.example.com:{rest or 'ID'}")
        return Author(platform, author_id, site)
    return Author(platform, rest)


def author_of(platform: str, record: Mapping[str, Any]) -> Author | None:
    """The author of a record of ``platform`` (None without an author id)."""
    author_id = record.get("author_id")
    site = site_of(platform, str(record.get("key") or ""))
    if not author_id or (site is None and persons_of(platform).per_site):
        return None
    try:
        return Author(platform, str(author_id), site)
    except ValueError:
        return None  # an id no --author could name (over 300 characters, a newline): --author-name finds it by key


def candidates(lake: Lake, tenant: str, author_id: str, client: Elasticsearch | None = None) -> Counter[Author]:
    """The people whose ``author_id`` is ``author_id`` (on any platform and site) in the tenant's records, in
    the lake and, with ``client``, in the index (an erasure whose lake step ran already), with how many
    records each: what a bare ``--author`` may mean."""
    found: Counter[Author] = Counter()
    for platform, source in lake.tenant_sources(tenant):
        for _, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source, columns=["key", "author_id"]):
            theirs = table.filter(pc.equal(table.column("author_id").cast(pa.string()), author_id))
            found.update(author for row in theirs.to_pylist() if (author := author_of(platform, row)) is not None)
    if client is not None:
        indexed: Counter[Author] = Counter()
        for doc in records_with_author_id(client, tenant, author_id):
            platform = str(doc.get("platform") or "")
            if platform in catalog.catalog().specs and (author := author_of(platform, doc)) is not None:
                indexed[author] += 1
        found |= indexed  # the larger count of each: the index holds the lake's records too
    return found
