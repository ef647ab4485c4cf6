"""Hydration of an X id list (the ``id_list`` kind): post ids re-fetched by ``GET /2/tweets?ids=``, 100 a request.

Each answer is stored as received, a raw line of format ``x-v2`` like any sync's page, so the ``x-v2``
normalizer makes the records: the posts found in ``data``, and for each id X names in ``errors`` a bare
observation saying why it is gone (``metadata.unavailable``: ``not_found``, ``not_authorized``,
``suspended``, ``unavailable``; X's own words in ``metadata.x_error``). An id X neither returns nor names is
counted (``ids_unanswered``) and named in the metadata. State (the checkpoint)::

    v, list     the list's SHA-256: a changed file starts over
    next        ids before this position are stored (saved with the batch that holds their answers)

A crash re-fetches nothing already stored: pages are buffered and stored every ``pages_per_batch`` requests
with the state that covers them, and what is buffered is stored before an error propagates.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.errors import PauseSource, SourceConfigError
from crawl_assets.sdk.http import ClientStats
from crawl_assets.sdk.sync import Budget, CollectEnv, Collected, PageBuffer, StoreBatch, SyncResult, opened, run_engine
from crawl_assets.sdk.id_lists import IdList, read_id_list
from crawl_assets.sources.x.client import TWEETS, XClient
from crawl_assets.sources.x.normalize_unavailable import names_a_post, unavailable_reason

if TYPE_CHECKING:
    from crawl_assets.sources.x.resource import XResource

LOOKUP_IDS = 100  # X's limit per request
SHOWN_UNANSWERED = 20


def is_post_id(text: str) -> bool:
    return text.isascii() and text.isdigit() and 0 < len(text) <= 20


@dataclass
class HydrateStats:
    pages: int = 0
    batches: int = 0
    requested: int = 0
    found: int = 0
    gone: Counter[str] = field(default_factory=Counter)  # reason -> ids
    unanswered: list[str] = field(default_factory=list)
    complete: bool = False

    def metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"ids_requested": self.requested, "records_fetched": self.found,
                                "records_new": self.found, "ids_gone": sum(self.gone.values()),
                                "ids_unanswered": len(self.unanswered), "batches": self.batches,
                                "complete": self.complete,
                                "ids_unanswered_list": ", ".join(self.unanswered[:SHOWN_UNANSWERED])}
        meta.update({f"gone_{reason}": count for reason, count in sorted(self.gone.items())})
        return meta


def _sorted_answer(body: dict[str, Any], asked: list[str], stats: HydrateStats) -> None:
    """Count what one lookup answered for the ids it asked: found, gone (by X's reason), or not answered."""
    wanted = set(asked)
    found = {str(t.get("id")) for t in body.get("data") or () if isinstance(t, dict)} & wanted
    named: dict[str, str] = {}
    for error in body.get("errors") or ():
        if names_a_post(error) and error["resource_id"] in wanted and error["resource_id"] not in found:
            named.setdefault(error["resource_id"], unavailable_reason(error))
    stats.found += len(found)
    stats.gone.update(named.values())
    stats.unanswered += [i for i in asked if i not in found and i not in named]


def hydrate_ids(client: XClient, ids: IdList, state: dict[str, Any], store: StoreBatch, budget: Budget, *,
                pages_per_batch: int = 5, clock: Callable[[], float] = time.time) -> SyncResult:
    """Look up ``ids`` from the position the state saved, as far as ``budget`` allows; the new state."""
    state = ids.resume(state)
    stats = HydrateStats()
    buffer = PageBuffer(store, stats, pages_per_batch)
    try:
        while state["next"] < len(ids.ids) and budget.allows(clock=clock, pages=stats.pages):
            asked = ids.ids[state["next"]:state["next"] + LOOKUP_IDS]
            page = client.lookup(asked)
            stats.requested += len(asked)
            _sorted_answer(page.json, asked, stats)
            state["next"] += len(asked)
            buffer.add(page.body.replace(b"\r", b" ").replace(b"\n", b" "), state, phase="hydrate", endpoint=TWEETS)
    except BaseException:
        if not buffer.broken:
            buffer.flush(state, only_lines=True)  # what was fetched stays fetched
        raise
    stats.complete = state["next"] >= len(ids.ids)
    buffer.flush(state)
    return SyncResult(state, stats)


def collect_ids(resource: XResource, entry: SourceEntry, env: CollectEnv) -> Collected:
    """The ``id_list`` collector: hydrate the entry's id list into the lake (budget and waits of the resource)."""
    from crawl_assets.sources.x.spec import XOptions

    started = time.time()
    client, options = opened(lambda: (resource.client(entry.tenant, entry.credential), entry.typed_options))
    options: XOptions
    try:
        ids = read_id_list(entry, is_post_id, "an X post id")
    except SourceConfigError as err:  # the list cannot be read: no retry helps until someone acts
        raise PauseSource(str(err)) from None
    budget = Budget(max_pages=resource.max_pages_per_run, deadline=started + resource.max_run_seconds)
    client.stats = ClientStats()
    result, batches = run_engine(
        entry, env, "x-v2",
        lambda state, store: hydrate_ids(client, ids, state, store, budget, pages_per_batch=options.pages_per_batch),
        rate_limit_retries=resource.max_rate_limit_retries, refused="X refused the request: ")
    stats: HydrateStats = result.stats
    meta = {**stats.metadata(), **ids.metadata(), **client.stats.as_metadata(),
            "ids_done": result.state.get("next", 0), "duration_seconds": round(time.time() - started, 3),
            "checkpoints_saved": env.checkpointer.saves}
    meta.pop("requests_by_endpoint", None)
    if stats.unanswered:
        env.log.warning(f"{entry.key}: X neither returned nor named {len(stats.unanswered)} ids")
    env.log.info(f"{entry.key}: {stats.found} of {stats.requested} ids found, {sum(stats.gone.values())} gone "
                 f"({dict(stats.gone)}), {meta['requests']} requests, complete={stats.complete}")
    return Collected(batches, meta)
