"""The one filter set every read of the API shares, turned into an Elasticsearch query scoped to a tenant.

A ``RecordFilter`` holds values only: each becomes a ``term``/``terms``/``range`` clause on a fixed field,
the text query a ``simple_query_string`` over the Persian-aware text fields (its syntax has no field
names, so a query cannot name ``tenant``, ``_index`` or any other field). ``scoped_query`` always adds
the tenant term, and every search goes through the tenant's read alias (``naming.read_alias``): a
tenant never reaches another's documents whatever the filter holds.

Hashtags and mentions are folded like the records store them (``#خبر_فوري`` finds ``خبر_فوری``);
authors match a platform id or a handle (``queries.author_query``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

from crawl_assets.index.documents import LEMMA_FIELD
from crawl_assets.index.naming import check_tenant
from crawl_assets.query.clauses import TEXT_FIELDS, author_query
from crawl_assets.persian.lemma import query_lemmas
from crawl_assets.normalize.text import fold_tag
from crawl_assets.schema.record import Platform

Deleted = Literal["exclude", "include", "only"]
DELETED_CHOICES: tuple[str, ...] = ("exclude", "include", "only")


@dataclass(frozen=True)
class RecordFilter:
    """Which records a request is about. Empty tuples mean "any"; values inside one field are OR-ed,
    fields are AND-ed. ``start``/``end`` bound ``created_at`` as [start, end)."""

    q: str | None = None
    platforms: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    langs: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    hashtags: tuple[str, ...] = ()
    mentions: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()  # forum topics: a topic's key (telegram:<chat>:<topic>) or its exact title
    start: datetime | None = None
    end: datetime | None = None
    deleted: Deleted = "exclude"
    # entities named in the records (``entity=``: ids or names), and the record keys they resolve to in the
    # features index (``enrich.search.entity_keys``; None: not resolved, or no entity asked for)
    entities: tuple[str, ...] = ()
    entity_keys: tuple[str, ...] | None = field(default=None, repr=False)

    def describe(self) -> dict[str, Any]:
        """The filter as plain JSON values (for export headers: the query that produced a file)."""
        out: dict[str, Any] = {}
        for name, value in asdict(self).items():
            if value in (None, (), []) or name == "entity_keys":
                continue
            out[name] = value.isoformat() if isinstance(value, datetime) else list(value) if isinstance(value, tuple) else value
        return out

    def clauses(self, tenant: str) -> list[dict[str, Any]]:
        """Filter-context clauses (no tenant term, no text query, no deletion rule). A source is a registered
        name (``gen-a``: that name on any platform of ``tenant``) or a full key (``acme.x.gen-a``)."""
        out: list[dict[str, Any]] = []
        if self.sources:
            out.append({"terms": {"source": source_keys(tenant, self.sources)}})
        for name, values in (("platform", self.platforms), ("lang", self.langs), ("kind", self.kinds)):
            if values:
                out.append({"terms": {name: list(values)}})
        if self.hashtags:
            out.append({"terms": {"hashtags": sorted({fold_tag(t) for t in self.hashtags})}})
        if self.mentions:
            out.append({"terms": {"mentions": sorted({fold_tag(m) for m in self.mentions})}})
        if self.authors:
            out.append({"bool": {"should": [author_query(a) for a in self.authors], "minimum_should_match": 1}})
        if self.topics:
            out.append(topic_clause(self.topics))
        bounds = {op: v.isoformat() for op, v in (("gte", self.start), ("lt", self.end)) if v is not None}
        if bounds:
            out.append({"range": {"created_at": bounds}})
        if self.entities:
            if self.entity_keys is None:
                raise ValueError("an entity filter must be resolved to record keys first (enrich.search.entity_keys)")
            out.append({"ids": {"values": list(self.entity_keys)}})
        return out


TOPIC_KEY = re.compile(r"[a-z]+:[0-9]{1,20}:[0-9]{1,20}")


def topic_clause(topics: tuple[str, ...]) -> dict[str, Any]:
    """Records of the forum topics named by key (``metadata.topic``) or exact title (``metadata.topic_title``):
    a topic's messages, its creation and its renames."""
    keys = sorted({t for t in topics if TOPIC_KEY.fullmatch(t)})
    titles = sorted({t for t in topics if not TOPIC_KEY.fullmatch(t)})
    should = [{"terms": {field: values}} for field, values in (("metadata.topic", keys), ("metadata.topic_title", titles))
              if values]
    return {"bool": {"should": should, "minimum_should_match": 1}}


def source_keys(tenant: str, sources: tuple[str, ...]) -> list[str]:
    """Source keys (``tenant.platform.name``) a filter's ``sources`` stand for, all of ``tenant``."""
    out = set()
    for value in sources:
        if "." in value:
            out.add(value)
        else:
            out.update(f"{tenant}.{platform}.{value}" for platform in get_args(Platform))
    return sorted(out)


_FLAGS = "AND|OR|NOT|PHRASE|PREFIX|PRECEDENCE|WHITESPACE|ESCAPE"
_NEGATED = re.compile(r"(?:^|[\s(])-((?:[^\W_]|\u200c)+)")


def text_clause(text: str, lang: str | None = None) -> dict[str, Any]:
    """A user's search string: words AND-ed, ``"phrases"``, ``a | b``, ``-word``, ``prefix*``; no field syntax.
    ``text_clean`` reads ZWNJ as a space, ``text_clean.joined`` drops it, so either spelling of a compound
    matches; every form of a word is found through ``text_lemma`` (the string's words replaced by their lemmas,
    Arabic stems when ``lang`` is ``ar``), scored below the exact fields; a ``-word`` excludes all its forms."""
    exact = {"simple_query_string": {"query": text, "fields": TEXT_FIELDS, "default_operator": "and", "flags": _FLAGS}}
    lemmas = query_lemmas(text, "ar" if lang == "ar" else "fa")
    either: dict[str, Any] = {"bool": {"should": [exact, {"simple_query_string": {
        "query": lemmas, "fields": [LEMMA_FIELD], "default_operator": "and", "flags": _FLAGS}}],
        "minimum_should_match": 1}}
    negated = query_lemmas(" ".join(_NEGATED.findall(text)), "ar" if lang == "ar" else "fa").split()
    if negated:
        either["bool"]["must_not"] = [{"terms": {LEMMA_FIELD: negated}}]
    return either


def scoped_query(tenant: str, flt: RecordFilter | None = None, extra: list[dict[str, Any]] | None = None,
                 *, use_text: bool = True) -> dict[str, Any]:
    """A ``bool`` query: the tenant term, the filter's clauses, ``extra`` clauses, the text query (scored) and
    the deletion rule (``exclude``: tombstones left out; ``only``: tombstones alone; ``include``: both)."""
    flt = flt or RecordFilter()
    query: dict[str, Any] = {"bool": {"filter": [{"term": {"tenant": check_tenant(tenant)}}, *flt.clauses(tenant),
                                                 *(extra or [])]}}
    if use_text and flt.q:
        query["bool"]["must"] = [text_clause(flt.q, flt.langs[0] if len(flt.langs) == 1 else None)]
    if flt.deleted == "exclude":
        query["bool"]["must_not"] = [{"term": {"deleted": True}}]
    elif flt.deleted == "only":
        query["bool"]["filter"].append({"term": {"deleted": True}})
    return query
