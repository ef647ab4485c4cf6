"""``crawl-assets es reindex``: move a logical index to a new physical generation built from the current
template, with reads and writes going on, and no write lost.

Writers address the logical name (``naming.index_name``). The steps, each safe to re-run after a crash
(re-running ``reindex`` resumes from whatever state the cluster is in):

1. first reindex only (the logical name is still a concrete index): block writes on it (in-flight
   writes finish first; writers meeting the block retry, see the sink), clone it to ``{name}.g1`` (hard
   links, seconds), without aliases yet;
2. create the new generation from the template; atomically make the logical name an alias whose
   write index is the new generation (deleting the concrete index in the same step, its read aliases
   moving to the clone, or moving the write flag from the previous generation, which is then
   write-blocked); writes land there from now on;
3. copy the old generation into the new one from one point in time, each document with its own
   version as an ``external`` version: a document written to the new generation since step 2 is newer
   (or the same) and the copy of it is a conflict, skipped, so newer documents always win;
4. atomically move the read aliases (tenant and family) to the new generation, then delete the old one.

Between 2 and 4 searches read the old generation (new writes become visible at step 4): nothing is
counted twice and nothing is lost. Erasure must not run on the tenant during a reindex (its deletes
meet the write block and fail loudly).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from elasticsearch import Elasticsearch

from crawl_assets.index.naming import by_logical, family_alias, generation, physical_name, read_alias
from crawl_assets.index.documents import with_lemmas
from crawl_assets.index.scan import copy_documents

log = logging.getLogger(__name__)


@dataclass
class ReindexResult:
    logical: str
    new_index: str
    copied: int = 0
    newer_kept: int = 0  # documents the new generation already had in a newer (or the same) version
    removed: list[str] = field(default_factory=list)


def _aliases_of(client: Elasticsearch, index: str) -> dict[str, dict]:
    return client.indices.get_alias(index=index)[index]["aliases"]


def _copy(client: Elasticsearch, source: str, target: str, result: ReindexResult, family: str) -> None:
    copied, newer = copy_documents(client, source, target, with_lemmas if family == "records" else None)
    result.copied += copied
    result.newer_kept += newer


def _create_empty(client: Elasticsearch, name: str, family: str) -> None:
    """A new generation from the template, without the template's cross-tenant alias (reads stay old)."""
    if client.indices.exists(index=name):
        return
    client.indices.create(index=name)
    client.indices.update_aliases(actions=[{"remove": {"index": name, "alias": family_alias(family),
                                                       "must_exist": False}}])


def reindex(client: Elasticsearch, logical: str, family: str, tenant: str) -> ReindexResult:
    """Move ``logical`` (a name ``naming.index_name`` gives) to a new generation; see the module doc."""
    read, fam = read_alias(family, tenant), family_alias(family)
    found = client.indices.get_alias(index=f"{logical},{logical}.g*", ignore_unavailable=True, allow_no_indices=True)
    physical = by_logical(found.body).get(logical, [])
    if not physical:
        raise ValueError(f"no index named {logical}")
    if logical in physical:  # 1-2. the first reindex: the logical name is still the concrete index
        client.indices.add_block(index=logical, block="write")  # writes in flight finish first
        client.indices.refresh(index=logical)
        clone, target = physical_name(logical, 1), physical_name(logical, 2)
        if clone not in physical:
            client.indices.clone(index=logical, target=clone, wait_for_active_shards="1")
        _create_empty(client, target, family)
        client.indices.update_aliases(actions=[  # one step: searches never see the original and its clone both
            {"remove_index": {"index": logical}},
            *({"add": {"index": clone, "alias": a}} for a in (read, fam)),
            {"add": {"index": target, "alias": logical, "is_write_index": True}}])
        physical = sorted({clone, target, *physical} - {logical}, key=generation)
    else:  # 2. later reindexes, or resuming one: the newest generation becomes (or is) the write index
        newest = physical[-1]
        target = physical_name(logical, generation(newest) + 1) if len(physical) == 1 else newest
        writer = next((p for p in physical if _aliases_of(client, p).get(logical, {}).get("is_write_index")), None)
        if writer != target:
            _create_empty(client, target, family)
            moves: list[dict] = [{"add": {"index": target, "alias": logical, "is_write_index": True}}]
            if writer is not None:
                moves.insert(0, {"remove": {"index": writer, "alias": logical}})
            client.indices.update_aliases(actions=moves)
            physical = sorted({*physical, target}, key=generation)
    result = ReindexResult(logical, target)
    olds = [p for p in physical if p != target]
    for old in olds:  # 3. copy what the old generations hold, newer documents win
        client.indices.add_block(index=old, block="write")  # waits for writes in flight there
        _copy(client, old, target, result, family)
    client.indices.refresh(index=target)
    moves = [{"add": {"index": target, "alias": a}} for a in (read, fam)]  # 4. reads move over at once
    moves += [{"remove": {"index": old, "alias": a, "must_exist": False}} for old in olds for a in (read, fam)]
    client.indices.update_aliases(actions=moves)
    for old in olds:
        client.indices.delete(index=old)
        result.removed.append(old)
    log.info("reindexed %s into %s: %d copied, %d newer kept", logical, target, result.copied, result.newer_kept)
    return result
