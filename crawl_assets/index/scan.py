"""Reading every match of a query, and bulk writes by ``_id``: the client-side building blocks that stand
in for ``_delete_by_query`` and ``_reindex``.

Those two APIs live in Elasticsearch's ``reindex`` module, which some clusters lack or restrict (the
test distribution ships without it; managed offerings may forbid it). A point in time plus
``search_after`` gives a consistent snapshot of any size through the search API alone, and the bulk
API does the writes, so erasure and reindexing work wherever search and bulk do. Every page is a
resumable step: a crash re-runs idempotent deletes or version-guarded writes, nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from elasticsearch import ApiError, Elasticsearch, NotFoundError

PAGE = 1000
KEEP_ALIVE = "2m"


@dataclass(frozen=True)
class Hit:
    index: str
    id: str
    version: int | None
    source: dict[str, Any] | None


class BulkWriteFailed(RuntimeError):
    """Some bulk items failed for a reason other than a version conflict; the message names them."""


def scan(client: Elasticsearch, index: str, query: dict[str, Any] | None = None, *, source: Any = False,
         version: bool = False, page: int = PAGE) -> Iterator[list[Hit]]:
    """Pages of the documents ``query`` matches under ``index`` (a name, alias or pattern), from one
    point in time; nothing when no index of that name exists."""
    try:
        pit = client.open_point_in_time(index=index, keep_alive=KEEP_ALIVE, ignore_unavailable=True)["id"]
    except NotFoundError:
        return
    after = None
    try:
        while True:
            resp = client.search(pit={"id": pit, "keep_alive": KEEP_ALIVE}, size=page, query=query or {"match_all": {}},
                                 sort=["_shard_doc"], search_after=after, source=source, version=version,
                                 track_total_hits=False)
            shards = resp.get("_shards") or {}
            if shards.get("failed"):
                raise RuntimeError(f"search over {index} failed on {shards['failed']} shard(s): {shards.get('failures')}")
            pit = resp.get("pit_id", pit)
            hits = resp["hits"]["hits"]
            if hits:
                yield [Hit(h["_index"], h["_id"], h.get("_version"), h.get("_source")) for h in hits]
            if len(hits) < page:
                return
            after = hits[-1]["sort"]
    finally:
        try:
            client.close_point_in_time(id=pit)
        except (ApiError, NotFoundError):
            pass  # expired already: nothing to free


def bulk_write(client: Elasticsearch, lines: list[bytes], *, refresh: bool = False) -> dict[str, int]:
    """Send prepared NDJSON action lines; counts per item result (``deleted``, ``not_found``, ``created``,
    ``updated``, ``conflict``). Raises ``BulkWriteFailed`` for any other item error."""
    counts: dict[str, int] = {}
    if not lines:
        return counts
    resp = client.bulk(operations=b"".join(lines), refresh=refresh,
                       filter_path="errors,items.*.status,items.*.result,items.*.error,items.*._id")
    failures = []
    for item in resp.get("items") or []:
        res = next(iter(item.values()))
        error = res.get("error")
        if error is None:
            kind = res.get("result", "ok")
        elif res.get("status") == 409:
            kind = "conflict"
        else:
            failures.append(f"{res.get('_id')}: {res.get('status')} {error.get('type')} {error.get('reason')}")
            continue
        counts[kind] = counts.get(kind, 0) + 1
    if failures:
        raise BulkWriteFailed(f"{len(failures)} bulk item(s) failed, e.g. {failures[:3]}")
    return counts


def copy_documents(client: Elasticsearch, source: str, target: str,
                   transform: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None) -> tuple[int, int]:
    """Copy every document of ``source`` into ``target`` (the client-side ``_reindex``) keeping ids, sources
    and versions: each is written with its own version as an ``external`` version, so a document ``target``
    already holds in a newer (or the same) version wins and the copy of it is skipped. ``transform`` adds what
    ``_source`` does not keep (a records index's ``text_lemma``). Idempotent; returns (copied, skipped as older
    or equal)."""
    client.indices.refresh(index=source)
    copied = skipped = 0
    for page in scan(client, source, source=True, version=True):
        lines = []
        for hit in page:
            lines.append(orjson.dumps({"index": {"_index": target, "_id": hit.id, "version": hit.version or 0,
                                                 "version_type": "external"}}) + b"\n")
            lines.append(orjson.dumps(transform(hit.source or {}) if transform else hit.source) + b"\n")
        counts = bulk_write(client, lines)
        copied += counts.get("created", 0) + counts.get("updated", 0)
        skipped += counts.get("conflict", 0)
    return copied, skipped


def delete_line(index: str, doc_id: str) -> bytes:
    return orjson.dumps({"delete": {"_index": index, "_id": doc_id}}) + b"\n"


def delete_matching(client: Elasticsearch, index: str, query: dict[str, Any]) -> int:
    """Hard-delete every document ``query`` matches under ``index`` (the client-side ``_delete_by_query``):
    the matches of one point in time, deleted page by page; returns how many were deleted."""
    deleted = 0
    touched: set[str] = set()
    for page in scan(client, index, query):
        counts = bulk_write(client, [delete_line(hit.index, hit.id) for hit in page])
        deleted += counts.get("deleted", 0)
        touched.update(hit.index for hit in page)
    if touched:
        client.indices.refresh(index=",".join(sorted(touched)), ignore_unavailable=True)
    return deleted
