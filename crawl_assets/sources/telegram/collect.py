"""The live collector of ``telegram_messages_raw``: one sync of one source, plain Python (the orchestration
runs it and acts on what it raises).

Errors are sorted once here: a long ``FLOOD_WAIT`` (or a busy account) ends the step with ``RetryLater`` after
the server's wait; a permanent error (``errors.permanent_reason``) raises ``PauseSource`` with the reason;
anything else is raised for the asset's transient retry policy (backoff with jitter). Progress already
checkpointed survives every one of them. Its engine is async and writes through a ``LakeSink`` (messages,
replies, media), so it does not share ``sdk.sync.run_engine``; its resource opens the connection.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.errors import PauseSource, RetryLater, SourceConfigError
from crawl_assets.sdk.sync import CollectEnv, Collected, SyncResult, lag_seconds
from crawl_assets.sdk.id_lists import ID_LIST
from crawl_assets.sources.telegram.errors import AccountBusy, LongFloodWait, permanent_reason
from crawl_assets.sources.telegram.sink import LakeSink

if TYPE_CHECKING:
    from crawl_assets.sources.telegram.client import CrawlClient
    from crawl_assets.sources.telegram.resource import TelegramResource


async def _sync(resource: TelegramResource, entry: SourceEntry, state: dict[str, Any], sink: LakeSink,
                used: list[CrawlClient]) -> SyncResult:
    # the engine, with Telethon (~37 MiB), loads when a Telegram source syncs, not with the definitions
    if entry.kind.value == ID_LIST:  # ids re-fetched by id (hydrate.py)
        from crawl_assets.sources.telegram.hydrate import run_hydrate as run_sync
    else:
        from crawl_assets.sources.telegram.sync import run_sync

    async with resource.connected(entry.tenant, entry.credential, entry.key) as client:
        used.append(client)
        return await run_sync(client, entry, state, sink, resource.budget())


def collect(resource: TelegramResource, entry: SourceEntry, env: CollectEnv) -> Collected:
    """Sync one Telegram source into the lake (the ``live`` collector of the Telegram spec)."""
    if entry.kind.value == "web_channel":  # no account: the public preview pages (web_sync.py)
        from crawl_assets.sources.telegram.web_sync import collect_web

        return collect_web(resource, entry, env)
    sink = LakeSink(env.lake, entry, env.run_id, env.checkpointer.save)
    used: list[CrawlClient] = []
    try:
        result = asyncio.run(_sync(resource, entry, env.checkpointer.load(), sink, used))
    except LongFloodWait as exc:
        env.log.warning(f"{entry.key}: {exc}; {len(sink.batches)} batches kept, retrying after the wait")
        raise RetryLater(str(exc), seconds=exc.seconds, max_retries=resource.flood_retries) from exc
    except AccountBusy as exc:
        env.log.warning(f"{entry.key}: {exc}")
        raise RetryLater(str(exc), seconds=exc.seconds, max_retries=resource.flood_retries) from exc
    except SourceConfigError as exc:  # an id list that cannot be read: no retry helps until someone acts
        raise PauseSource(str(exc)) from None
    except Exception as exc:
        reason = permanent_reason(exc)
        if reason is not None:
            raise PauseSource(reason) from exc
        raise
    stats, state = result.stats, result.state
    client = used[0]
    now = datetime.now(timezone.utc)
    extra: dict[str, Any] = {
        "credential": client.credential,
        **stats.record_counts(),
        "comments": stats.comments,
        "media_files": stats.media_files,
        "requests": client.requests_made,
        "requests_by_type": dict(client.request_counts),
        "rate_limit_wait_seconds": round(client.flood_waited, 3),
        **client.pacer.summary(),
        "network_retries": client.network_retried,
        "checkpoints": stats.checkpoints,
        "budget_exhausted": stats.budget_exhausted,
        "history_complete": bool(state.get("history_complete")),
        "newest_id": state.get("newest_id", 0),
        "oldest_id": state.get("oldest_id", 0),
        "newest_event_lag_seconds": lag_seconds(state.get("newest_date"), now),
        "duration_seconds": stats.duration_seconds,
        **stats.extra,
    }
    env.log.info(f"{entry.key}: {stats.new} new, {stats.updated} updated, {stats.deleted} deleted, "
                 f"{client.requests_made} requests, {len(sink.batches)} batches")
    return Collected(sink.batches, extra)
