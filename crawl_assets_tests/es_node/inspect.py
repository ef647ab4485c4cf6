"""Reading a cluster's documents back in tests, wiping what a test left (only names of this deployment's index
prefix, ``crawl-*`` by default), and keeping a world's indices as a snapshot to restore (the node's ``path.repo``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.index import naming

PAGE = 5000


@dataclass(frozen=True)
class Hit:
    index: str
    version: int
    source: dict[str, Any]


def all_docs(client: Elasticsearch, index: str, query: dict[str, Any] | None = None) -> dict[str, Hit]:
    """``_id -> Hit`` of every document ``query`` matches under ``index`` (a name, alias or pattern),
    however many (point in time + search_after); ``{}`` when nothing of that name exists."""
    client.indices.refresh(index=index, ignore_unavailable=True, allow_no_indices=True)
    try:
        pit = client.open_point_in_time(index=index, keep_alive="1m", ignore_unavailable=True)["id"]
    except NotFoundError:
        return {}
    out: dict[str, Hit] = {}
    after = None
    try:
        while True:
            resp = client.search(pit={"id": pit, "keep_alive": "1m"}, size=PAGE, version=True,
                                 query=query or {"match_all": {}}, sort=["_shard_doc"], search_after=after)
            hits = resp["hits"]["hits"]
            pit = resp.get("pit_id", pit)
            for hit in hits:
                if hit["_id"] in out:
                    raise AssertionError(f"{hit['_id']} is in two indices: {out[hit['_id']].index}, {hit['_index']}")
                out[hit["_id"]] = Hit(hit["_index"], hit["_version"], hit["_source"])
            if len(hits) < PAGE:
                return out
            after = hits[-1]["sort"]
    finally:
        client.close_point_in_time(id=pit)


def sources(client: Elasticsearch, index: str, query: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    return {doc_id: hit.source for doc_id, hit in all_docs(client, index, query).items()}


def wipe(client: Elasticsearch, prefix: str | None = None) -> None:
    """Delete every index and index template whose name starts with ``prefix`` (by name: clusters
    refuse wildcard deletes by default)."""
    prefix = prefix or f"{naming.prefix()}-"
    found = client.indices.get(index=f"{prefix}*", expand_wildcards="all", allow_no_indices=True,
                               ignore_unavailable=True, filter_path="*.settings.index.provided_name").body or {}
    names = sorted(found)
    for start in range(0, len(names), 50):
        client.indices.delete(index=",".join(names[start:start + 50]), ignore_unavailable=True)
    try:
        templates = client.indices.get_index_template(name=f"{prefix}*").body.get("index_templates", [])
    except NotFoundError:  # a pattern that matches nothing is a 404 here
        templates = []
    for template in templates:
        client.indices.delete_index_template(name=template["name"])


REPOSITORY = "crawl-tests"


def _repository(client: Elasticsearch, location: Path) -> None:
    client.snapshot.create_repository(name=REPOSITORY, repository={"type": "fs", "settings": {"location": str(location)}})


def _templates_file(location: Path, name: str) -> Path:
    return location / f"{name}.index-templates.json"


def snapshot(client: Elasticsearch, location: Path, name: str, prefix: str | None = None) -> None:
    """Snapshot ``name`` of every index (with its aliases) whose name starts with ``prefix``; the index
    templates of that prefix are kept beside it (not the cluster's global state, which holds other things)."""
    prefix = prefix or f"{naming.prefix()}-"
    _repository(client, location)
    if any(s["snapshot"] == name for s in client.snapshot.get(repository=REPOSITORY, snapshot="_all")["snapshots"]):
        client.snapshot.delete(repository=REPOSITORY, snapshot=name)
    client.snapshot.create(repository=REPOSITORY, snapshot=name, indices=f"{prefix}*", include_global_state=False,
                           feature_states=["none"], wait_for_completion=True)
    try:
        templates = client.indices.get_index_template(name=f"{prefix}*").body.get("index_templates", [])
    except NotFoundError:
        templates = []
    _templates_file(location, name).write_text(json.dumps(templates))


def restore(client: Elasticsearch, location: Path, name: str, prefix: str | None = None) -> None:
    """Wipe ``prefix*``, then bring back snapshot ``name``: its index templates, its indices with their
    aliases; returns once the shards are allocated."""
    prefix = prefix or f"{naming.prefix()}-"
    _repository(client, location)
    wipe(client, prefix)
    for template in json.loads(_templates_file(location, name).read_text()):
        client.indices.put_index_template(name=template["name"], body=template["index_template"])
    client.snapshot.restore(repository=REPOSITORY, snapshot=name, indices=f"{prefix}*", include_aliases=True,
                            include_global_state=False, feature_states=["none"], wait_for_completion=True)
    client.cluster.health(index=f"{prefix}*", wait_for_status="yellow", timeout="60s")
