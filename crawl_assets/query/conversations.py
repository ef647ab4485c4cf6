"""One record with its edit history and tombstone state, and one conversation as an ordered tree.

Both read through the tenant's alias with tombstones included (a deleted message is part of a thread's
shape; it is marked, not hidden). What a record points to but the index does not hold (a parent never
collected, another tenant's post: the query is scoped, so it is simply not found) is marked missing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.core import catalog
from crawl_assets.query import steps
from crawl_assets.query.filters import RecordFilter, scoped_query
from crawl_assets.index.naming import read_alias

MAX_THREAD = 5000
MAX_PARENT_HOPS = 50
MAX_VERSIONS = 100
_ALL = RecordFilter(deleted="include")


_BY_TIME: list[Any] = [{"created_at": {"order": "asc", "missing": "_last"}}, {"key": "asc"}]


def _search(client: Elasticsearch, tenant: str, clause: dict[str, Any], size: int,
            sort: list[Any] | None = None) -> list[dict[str, Any]]:
    return steps.run(client, _search_query(tenant, clause, size, sort or _BY_TIME))


def _search_query(tenant: str, clause: dict[str, Any], size: int,
                  sort: list[Any] | None = _BY_TIME) -> steps.Query[list[dict[str, Any]]]:
    """Hits in ``sort`` order (None: no sort clause, Elasticsearch's order)."""
    try:
        resp = yield from steps.call("search", index=read_alias("records", tenant), ignore_unavailable=True, size=size,
                                     query=scoped_query(tenant, _ALL, [clause]), **({"sort": sort} if sort else {}))
    except NotFoundError:
        return []
    return [h["_source"] for h in resp["hits"]["hits"]]


def fetch_keys(client: Elasticsearch, tenant: str, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The tenant's records with these keys (any source, tombstones included), by key."""
    return steps.run(client, fetch_keys_query(tenant, keys))


def fetch_keys_query(tenant: str, keys: Iterable[str]) -> steps.Query[dict[str, dict[str, Any]]]:
    """Of two documents with one key (a record whose ``created_at`` moved to another monthly index) the later
    one is kept: room for two hits per key is asked for and the hits are put in time order here. Elasticsearch
    is asked for no sort: a sort on a field adds a pre-filter (can_match) round over every index of the alias
    (12 monthly indices for a year), a large share of a one-key lookup's time (docs/API.md)."""
    wanted = sorted(set(keys))
    out: dict[str, dict[str, Any]] = {}
    for i in range(0, len(wanted), 1000):
        chunk = wanted[i:i + 1000]
        docs = yield from _search_query(tenant, {"terms": {"key": chunk}}, 2 * len(chunk), sort=None)
        for doc in sorted(docs, key=lambda d: (d.get("created_at") is None, d.get("created_at") or "", d["key"])):
            out[doc["key"]] = doc
    return out


def tombstone_state(doc: dict[str, Any]) -> dict[str, Any]:
    meta = doc.get("metadata") or {}
    return {"deleted": bool(doc.get("deleted")), "deleted_at": doc.get("deleted_at"),
            "bare": bool(meta.get("tombstone")), "unavailable": meta.get("unavailable")}


def record_with_history(client: Elasticsearch, tenant: str, key: str) -> dict[str, Any] | None:
    """``{"record", "versions", "live_version", "tombstone", "history_note"}`` or None when the tenant has no
    record of that key. X edits are separate posts listed in ``metadata.edit_history_tweet_ids``: every
    indexed version comes back oldest first, and ``live_version`` names the latest. Other platforms edit in
    place: the record carries ``edited_at``; its earlier text is kept in the raw layer, not in the index."""
    return steps.run(client, record_query(tenant, key))


def record_query(tenant: str, key: str) -> steps.Query[dict[str, Any] | None]:
    found = yield from fetch_keys_query(tenant, [key])
    doc = found.get(key)
    if doc is None:
        return None
    meta = doc.get("metadata") or {}
    chain = [str(i) for i in (meta.get("edit_history_tweet_ids") or [])][:MAX_VERSIONS]
    versions: list[dict[str, Any]] = [doc]
    note = None
    platform = str(doc.get("platform") or "")
    if catalog.keeps_edit_histories(platform) and len(chain) > 1:
        keys = [f"{platform}:{tid}" for tid in chain]
        if meta.get("superseded_by"):
            keys.append(str(meta["superseded_by"]))
        got = yield from fetch_keys_query(tenant, keys)
        got.setdefault(key, doc)
        versions = sorted(got.values(), key=lambda d: (d.get("created_at") or "", d["key"]))
        missing = [k for k in keys if k not in got]
        if missing:
            note = f"versions not in the index: {', '.join(missing)}"
    elif doc.get("edited_at"):
        note = "edited in place on this platform: the index holds the latest text; earlier observations are in the raw layer"
    live = meta.get("superseded_by") or versions[-1]["key"]
    return {"record": doc, "versions": [{"key": v["key"], "created_at": v.get("created_at"), "text": v.get("text"),
                                         "deleted": bool(v.get("deleted"))} for v in versions],
            "live_version": live, "tombstone": tombstone_state(doc), "history_note": note}


def _parent(doc: dict[str, Any]) -> str | None:
    parent = doc.get("reply_to")
    return parent if parent and parent != doc.get("key") else None


def thread(client: Elasticsearch, tenant: str, key: str, limit: int = MAX_THREAD) -> dict[str, Any] | None:
    """The conversation of record ``key`` as a depth-first tree: ``items`` of ``{"key", "depth", "parent",
    "missing", "record"}`` (siblings oldest first). Parents outside the conversation are fetched across the
    tenant's sources up to ``MAX_PARENT_HOPS`` levels; a parent or quoted/reposted record the index does not
    hold is an item (parents) or a ``context`` entry with ``missing: true``. ``truncated`` when the
    conversation has more than ``limit`` records (the oldest ``limit`` are kept)."""
    anchor = fetch_keys(client, tenant, [key]).get(key)
    if anchor is None:
        return None
    cid = anchor.get("conversation_id") or key
    docs = _search(client, tenant, {"term": {"conversation_id": cid}}, limit + 1)
    truncated = len(docs) > limit
    by_key = {d["key"]: d for d in docs[:limit]}
    by_key.setdefault(key, anchor)
    missing: set[str] = set()
    pending = {cid} - by_key.keys() | {p for d in by_key.values() if (p := _parent(d)) and p not in by_key}
    for _ in range(MAX_PARENT_HOPS):
        if not pending:
            break
        found = fetch_keys(client, tenant, pending)
        by_key.update(found)
        missing |= {k for k in pending - found.keys() if k != cid or any(_parent(d) == k for d in by_key.values())}
        pending = {p for d in found.values() if (p := _parent(d)) and p not in by_key and p not in missing}
    children: dict[str | None, list[str]] = {}
    for k, d in by_key.items():
        p = _parent(d)
        children.setdefault(p if p in by_key or p in missing else None, []).append(k)
    for m in missing:
        children.setdefault(None, []).append(m)

    def when(k: str) -> str:
        if k in by_key:
            return by_key[k].get("created_at") or ""
        return min((when(c) for c in children.get(k, [])), default="")

    items: list[dict[str, Any]] = []
    stack = [(k, 0, None) for k in sorted(children.get(None, []), key=lambda k: (when(k), k), reverse=True)]
    while stack:
        k, depth, parent = stack.pop()
        items.append({"key": k, "depth": depth, "parent": parent, "missing": k in missing, "record": by_key.get(k)})
        kids = sorted(children.get(k, []), key=lambda c: (when(c), c), reverse=True)
        stack.extend((c, depth + 1, k) for c in kids)
    refs = {r for d in by_key.values() for r in (d.get("quote_of"), d.get("repost_of")) if r}
    got = fetch_keys(client, tenant, refs - by_key.keys()) if refs - by_key.keys() else {}
    context = {r: ({"missing": False, "record": by_key.get(r) or got[r]} if r in by_key or r in got
                   else {"missing": True, "record": None}) for r in sorted(refs)}
    return {"conversation_id": cid, "anchor": key, "items": items, "context": context, "truncated": truncated}
