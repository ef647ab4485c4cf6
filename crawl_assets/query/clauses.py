"""The queries the index is for, as plain functions over a client (the later API reuses them).

Every query goes through one tenant's read alias and also filters on that tenant, so a tenant never
sees another's documents; tombstones (``deleted: true``) are left out unless asked for, and so are earlier
versions of edited X posts (``metadata.superseded_by``: a post edited twice counts once). Each ``*_query``
builds the request body; the function beside it runs it and shapes the answer.

* ``search_text``: Persian-aware full text: ``text_clean`` (ZWNJ read as a space) and ``text_clean.joined``
  (ZWNJ removed) are both searched, so a word written with ZWNJ, with a space or with nothing between its
  parts is found either way; Arabic and Persian letter forms and digits are folded by the analyzer; every form
  of a word (plurals, possessives, verb forms) through ``text_lemma``, scored below the exact fields, as the
  API's search does. ``text_clean`` is the one analyzed copy of the text (``text`` is kept as observed).
* ``hashtag_counts``: hashtags over a date range, across the monthly indices.
* ``thread``: one conversation in order.
* ``author_posts``: an author's posts, X edits folded into the latest version with its history.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.index.documents import LEMMA_FIELD
from crawl_assets.index.naming import check_tenant, read_alias
from crawl_assets.persian.lemma import lemma_text

TEXT_FIELDS = ["text_clean^3", "text_clean.joined^2"]  # exact words first, then ZWNJ-free spellings (then text_lemma)
SUPERSEDED = "metadata.superseded_by"  # an earlier version of an edited X post (a key in the flattened field)


def _filtered(tenant: str, must: list[dict[str, Any]] | None = None, filters: list[dict[str, Any]] | None = None,
              include_deleted: bool = False, include_superseded: bool = False) -> dict[str, Any]:
    query: dict[str, Any] = {"bool": {"filter": [{"term": {"tenant": check_tenant(tenant)}}, *(filters or [])]}}
    if must:
        query["bool"]["must"] = must
    must_not = ([] if include_deleted else [{"term": {"deleted": True}}]) + (
        [] if include_superseded else [{"exists": {"field": SUPERSEDED}}])
    if must_not:
        query["bool"]["must_not"] = must_not
    return query


def _range(start: datetime | str | None, end: datetime | str | None) -> list[dict[str, Any]]:
    """``created_at`` in [start, end) when given."""
    bounds = {op: v.isoformat() if isinstance(v, datetime) else v for op, v in (("gte", start), ("lt", end)) if v}
    return [{"range": {"created_at": bounds}}] if bounds else []


def _search(client: Elasticsearch, tenant: str, **body: Any) -> dict[str, Any]:
    try:
        return client.search(index=read_alias("records", tenant), ignore_unavailable=True, **body).body
    except NotFoundError:  # the tenant has no index yet
        return {"hits": {"hits": [], "total": {"value": 0}}, "aggregations": {}}


def search_text_query(tenant: str, text: str, *, lang: str | None = None, start: Any = None, end: Any = None,
                      include_deleted: bool = False, include_superseded: bool = False) -> dict[str, Any]:
    exact = {"multi_match": {"query": text, "fields": TEXT_FIELDS, "type": "best_fields", "operator": "and"}}
    forms = {"match": {LEMMA_FIELD: {"query": lemma_text(text, "ar" if lang == "ar" else "fa"), "operator": "and"}}}
    match = {"bool": {"should": [exact, forms], "minimum_should_match": 1}}
    filters = ([{"term": {"lang": lang}}] if lang else []) + _range(start, end)
    return _filtered(tenant, [match], filters, include_deleted, include_superseded)


def search_text(client: Elasticsearch, tenant: str, text: str, *, lang: str | None = None, start: Any = None,
                end: Any = None, size: int = 20, include_deleted: bool = False,
                include_superseded: bool = False) -> list[dict[str, Any]]:
    """Records whose text matches all words of ``text``, best first (then newest); earlier versions of edited
    X posts only with ``include_superseded``."""
    query = search_text_query(tenant, text, lang=lang, start=start, end=end, include_deleted=include_deleted,
                              include_superseded=include_superseded)
    resp = _search(client, tenant, query=query, size=size, sort=["_score", {"created_at": "desc"}])
    return [hit["_source"] for hit in resp["hits"]["hits"]]


def hashtag_counts(client: Elasticsearch, tenant: str, start: Any = None, end: Any = None,
                   size: int = 20) -> list[tuple[str, int]]:
    """(hashtag, records) over ``created_at`` in [start, end), most used first, across monthly indices."""
    resp = _search(client, tenant, size=0, query=_filtered(tenant, filters=_range(start, end)),
                   aggs={"tags": {"terms": {"field": "hashtags", "size": size}}})
    buckets = (resp.get("aggregations") or {}).get("tags", {}).get("buckets", [])
    return [(b["key"], b["doc_count"]) for b in buckets]


def thread(client: Elasticsearch, tenant: str, conversation_id: str, size: int = 1000) -> list[dict[str, Any]]:
    """The records of one conversation, oldest first (ties by key)."""
    resp = _search(client, tenant, size=size, query=_filtered(tenant, filters=[{"term": {"conversation_id": conversation_id}}]),
                   sort=[{"created_at": "asc"}, {"key": "asc"}])
    return [hit["_source"] for hit in resp["hits"]["hits"]]


def author_query(author: str) -> dict[str, Any]:
    """Records of one author named by platform id or handle (``Sara_K``, ``@sara_k``). For reading only:
    erasure matches stable ids alone (``index.erasure.selector_query``), never a display name or handle."""
    handles = sorted({author, author.lstrip("@"), author.lstrip("@").casefold()})
    return {"bool": {"should": [{"term": {"author_id": author}}, {"terms": {"author_handle": handles}}],
                     "minimum_should_match": 1}}


def author_posts(client: Elasticsearch, tenant: str, author: str, size: int = 100) -> list[dict[str, Any]]:
    """An author's posts (platform id or handle), newest first. An X edit is a new post id whose
    ``metadata.edit_history_tweet_ids`` lists the chain: the chain is one entry, the latest version,
    with ``history`` = the earlier versions (oldest first). Other platforms edit in place: their
    entry carries ``edited_at`` and an empty ``history``."""
    resp = _search(client, tenant, size=size, query=_filtered(tenant, filters=[author_query(author)],
                                                               include_superseded=True),  # folded below
                   sort=[{"created_at": "desc"}, {"key": "asc"}])
    docs = [hit["_source"] for hit in resp["hits"]["hits"]]
    chains: dict[str, list[dict[str, Any]]] = {}
    order: list[str] = []
    for doc in docs:
        ids = (doc.get("metadata") or {}).get("edit_history_tweet_ids") or []
        chain = f"{doc.get('platform')}:{ids[0]}" if ids else doc["key"]
        if chain not in chains:
            chains[chain] = []
            order.append(chain)
        chains[chain].append(doc)
    out = []
    for chain in order:
        versions = sorted(chains[chain], key=lambda d: (d.get("created_at") or "", d["key"]))
        out.append({**versions[-1], "history": versions[:-1]})
    return out
