"""Which records a release holds: the API's filter set (``RecordFilter``) applied to the lake's records in
Arrow, plus what the release does to them (ids only per platform, pseudonymized authors)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.core import names
from crawl_assets.query.filters import RecordFilter, source_keys
from crawl_assets.normalize.text import fold_tag
from crawl_assets.release.terms import terms_of


@dataclass(frozen=True)
class ReleaseQuery:
    """A tenant's records picked by ``filter`` (no text query: that needs the index); ``dehydrate``: platforms
    released as ids only beside those whose terms say so; ``pseudonymize``: author ids replaced by keyed hashes."""

    tenant: str
    filter: RecordFilter = field(default_factory=RecordFilter)
    dehydrate: tuple[str, ...] = ()
    pseudonymize: bool = False

    def __post_init__(self) -> None:
        names.check_tenant(self.tenant)
        if self.filter.q:
            raise ValueError("a release cannot hold a text query (q): it reads the lake, not the index; pick records "
                             "by source, platform, language, kind, author, hashtag, mention and time")

    def ids_only(self, platform: str) -> bool:
        return platform in self.dehydrate or terms_of(platform).ids_only

    def describe(self) -> dict[str, Any]:
        """The query as plain JSON values: in the datasheet, and what the release id and pseudonyms derive from."""
        return {"tenant": self.tenant, "filter": self.filter.describe() | {"deleted": self.filter.deleted},
                "dehydrate": sorted(self.dehydrate), "pseudonymize": self.pseudonymize}

    def digest(self) -> str:
        return hashlib.sha256(orjson.dumps(self.describe(), option=orjson.OPT_SORT_KEYS)).hexdigest()

    def mask(self, batch: pa.RecordBatch) -> pa.Array:
        """Which rows of a batch of the tenant's latest records the query picks."""
        flt, rows = self.filter, batch.num_rows
        keep = pa.array([True] * rows, pa.bool_())

        def both(more: Any) -> None:
            nonlocal keep
            keep = pc.and_(keep, pc.fill_null(more, False))

        if flt.sources:
            both(pc.is_in(batch.column("source"), pa.array(source_keys(self.tenant, flt.sources))))
        for column, values in (("platform", flt.platforms), ("lang", flt.langs), ("kind", flt.kinds)):
            if values:
                both(pc.is_in(batch.column(column), pa.array(list(values))))
        for column, values in (("hashtags", flt.hashtags), ("mentions", flt.mentions)):
            if values:
                both(_any_in(batch.column(column), sorted({fold_tag(v) for v in values}), rows))
        if flt.authors:
            handles = sorted({h for a in flt.authors for h in (a, a.lstrip("@"), a.lstrip("@").casefold())})
            both(pc.or_(pc.fill_null(pc.is_in(batch.column("author_id"), pa.array(list(flt.authors))), False),
                        pc.fill_null(pc.is_in(batch.column("author_handle"), pa.array(handles)), False)))
        created = batch.column("created_at")
        if flt.start is not None:
            both(pc.greater_equal(created, pa.scalar(flt.start, created.type)))
        if flt.end is not None:
            both(pc.less(created, pa.scalar(flt.end, created.type)))
        deleted = pc.fill_null(batch.column("deleted"), False)
        if flt.deleted == "exclude":
            both(pc.invert(deleted))
        elif flt.deleted == "only":
            both(deleted)
        return keep


def _any_in(lists: pa.Array, values: list[str], rows: int) -> pa.Array:
    """Per row of a list column: whether any element is one of ``values``."""
    flat = pc.list_flatten(lists)
    hit = pc.fill_null(pc.is_in(flat, pa.array(values, pa.string())), False)
    parents = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    out = [False] * rows
    for parent in parents[hit.to_numpy(zero_copy_only=False)]:
        out[int(parent)] = True
    return pa.array(out, pa.bool_())
