"""The Google Play reviews sync: every page ``reviews.list`` has, each sync, and the one-week window.

``reviews.list`` only returns reviews created or modified in about the last week. So:

- **cadence**: a live Play source must be synced at least twice per window (``policy.interval_minutes`` at
  most half of ``window_days``); a slower policy is refused before any request (``CadenceError``);
- **gap**: when the last *complete* pass started more than a window ago, reviews modified in between
  may never be seen. The sync still runs, and reports ``gap_detected``, ``gap_from``/``gap_to`` and a
  warning (fill it from a Play Console CSV export: an ``export_file`` source of format ``play-csv``).

State: ``last_complete_at`` (start of the last complete pass, ISO), ``pass`` {token, started} while a
pass is unfinished (a stopped run resumes at its page token).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from crawl_assets.registry import SourceEntry
from crawl_assets.normalize.build import wrap_line
from crawl_assets.sources.play.client import PlayClient
from crawl_assets.sources.play.spec import PlayOptions
from crawl_assets.sdk.sync import Budget, StoreBatch, SyncResult, begin, require_kind
from crawl_assets.sdk.errors import SourceConfigError, TransientError

RAW_FORMAT = "play"


class CadenceError(SourceConfigError):
    """The source's sync policy is too slow for the API's window: a gap would be certain."""


def max_interval_minutes(window: timedelta) -> int:
    """The slowest cadence that still gives two chances per window."""
    return int(window.total_seconds() // 60 // 2)


def check_cadence(entry: SourceEntry, options: PlayOptions) -> None:
    limit = max_interval_minutes(options.window)
    if entry.policy.interval_minutes > limit:
        raise CadenceError(
            f"source {entry.key}: policy.interval_minutes={entry.policy.interval_minutes} is too slow for "
            f"reviews.list, which only returns the last {options.window.days} days; use at most {limit}")


def gap_report(last_complete: str | None, now: datetime, window: timedelta) -> dict[str, Any]:
    """``gap_detected`` and, when there is one, the interval of modifications that could not be seen."""
    if not last_complete:
        return {"gap_detected": False, "history_starts": (now - window).isoformat()}
    previous = datetime.fromisoformat(last_complete)
    visible_from = now - window
    if previous >= visible_from:
        return {"gap_detected": False}
    return {"gap_detected": True, "gap_from": previous.isoformat(), "gap_to": visible_from.isoformat(),
            "gap_seconds": round((visible_from - previous).total_seconds(), 1)}


def sync_app(client: PlayClient, entry: SourceEntry, state: dict[str, Any], store: StoreBatch, budget: Budget,
             *, clock: Callable[[], float] = time.time) -> SyncResult:
    """Store every review page of the app; report a gap when the previous complete pass is too old."""
    require_kind(entry, "app", "Google Play")
    options: PlayOptions = entry.typed_options  # parsed and validated by the registry
    check_cadence(entry, options)
    state, stats, buffer = begin(state, store, options.pages_per_batch)
    now = datetime.fromtimestamp(clock(), timezone.utc)
    if not state.get("pass"):
        state["pass"] = {"token": None, "started": now.isoformat()}
    p = state["pass"]
    gap = gap_report(state.get("last_complete_at"), datetime.fromisoformat(p["started"]), options.window)
    stats.extra.update(gap)
    if gap["gap_detected"]:
        buffer.info.update(gap)  # also in the next raw batch's manifest: releases' datasheets read gaps from the lake
        stats.warnings.append(
            f"reviews modified between {gap['gap_from']} and {gap['gap_to']} may be missing: the previous complete "
            f"sync is older than the {options.window.days}-day window of reviews.list (import a Play Console CSV "
            "export to fill it)")
    replies = 0
    while budget.allows(client.stats, clock):
        page = client.reviews(entry.identifier, token=p["token"], max_results=options.max_results,
                              translation_language=options.translation_language)
        body = page.json if isinstance(page.json, dict) else None
        if body is None:
            raise TransientError("play reviews.list: answer is not a JSON object", endpoint=page.endpoint)
        reviews = body.get("reviews") or []
        for review in reviews:
            stats.fetched += 1
            stats.new += 1
            for comment in review.get("comments") or []:
                if "developerComment" in comment:
                    replies += 1
                seconds = ((comment.get("userComment") or {}).get("lastModified") or {}).get("seconds")
                if seconds is not None:
                    stats.saw(datetime.fromtimestamp(int(seconds), timezone.utc))
        token = (body.get("tokenPagination") or {}).get("nextPageToken")
        p["token"] = token
        if not token:
            state["last_complete_at"] = p["started"]
            state.pop("pass")
            stats.complete = True
        if reviews or not token:
            buffer.add(wrap_line(page.body, endpoint=page.endpoint, package=entry.identifier,
                                 retrieved_at=datetime.fromtimestamp(clock(), timezone.utc).isoformat()), state)
        if not token:
            break
    buffer.flush(state)
    stats.extra.update(developer_replies=replies, last_complete_at=state.get("last_complete_at") or "")
    return SyncResult(state, stats)
