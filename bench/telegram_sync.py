"""Sync a simulated Telegram channel (default 1M messages) through Telethon and the MTProto stand-in.

Prints throughput of the whole sync, throughput of our own side (total minus the stand-in server's time:
building, serializing and parsing the simulated answers), where our time went (lake writes vs. the rest:
Telethon's paging and parsing, our JSON lines, checkpoints) and the peak RSS of the process.

    python bench/telegram_sync.py [--messages 1000000] [--max-seconds 600] [--pages-per-batch 10]

With ``--max-seconds`` the sync stops at that time budget (a run budget of messages) and the figures
are extrapolated to the full channel, saying so.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from crawl_assets.lake import Lake  # noqa: E402
from crawl_assets.registry import SourceEntry  # noqa: E402
from crawl_assets.sources.telegram.resource import TelegramCredential, TelegramResource  # noqa: E402
from crawl_assets.sources.telegram.sink import LakeSink  # noqa: E402
from crawl_assets.sources.telegram import sync as sync_module  # noqa: E402
from crawl_assets.sources.telegram.sync import run_sync  # noqa: E402
from crawl_assets_tests.standins import telegram_mtproto as tm  # noqa: E402
from peak import peak_rss_mib  # noqa: E402  (bench/peak.py)


class TimedSink(LakeSink):
    """LakeSink that also measures the time spent making batches durable."""

    write_seconds = 0.0

    def write(self, lines, *, kind, extra):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return super().write(lines, kind=kind, extra=extra)
        finally:
            self.write_seconds += time.perf_counter() - started


LINE_SECONDS = [0.0]


def _timed_message_line(message):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    try:
        return _message_line(message)
    finally:
        LINE_SECONDS[0] += time.perf_counter() - started


_message_line = sync_module.message_line
sync_module.message_line = _timed_message_line  # bench-only instrumentation of the engine's line encoder




def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--max-seconds", type=float, default=0, help="stop after about this long and extrapolate")
    ap.add_argument("--pages-per-batch", type=int, default=10)
    args = ap.parse_args()

    world = tm.World()
    chat = world.channel("bench", messages=args.messages, step_seconds=30)
    chat.delete(*range(500, 600))
    tm.use(world)
    rss_start = peak_rss_mib()

    with tempfile.TemporaryDirectory() as tmp:
        res = TelegramResource(
            credentials={"default:": TelegramCredential(api_id="1", api_hash="0" * 32, session=tm.session_for("default"))},
            request_interval_seconds=0, lock_dir=f"{tmp}/locks",
            max_pages_per_run=10**9, max_messages_per_run=10**9, pages_per_checkpoint=args.pages_per_batch,
        )
        entry = SourceEntry(name="bench", platform="telegram", kind="channel", identifier="@bench")
        checkpoints: list[dict] = []
        sink = TimedSink(Lake(f"{tmp}/lake"), entry, "bench", checkpoints.append)
        stored = 0
        started = time.perf_counter()
        state: dict = {}
        while True:
            # without a time limit one run does everything; with one, runs of ~10 s each until it is spent
            chunk = res if not args.max_seconds else res.model_copy(update={"max_messages_per_run": 50_000})

            async def one() -> dict:
                async with chunk.connected("default") as client:
                    result = await run_sync(client, entry, state, sink, chunk.budget())
                    return {"state": result.state, "new": result.stats.new}

            out = asyncio.run(one())
            state, stored = out["state"], stored + out["new"]
            if state.get("history_complete") or (args.max_seconds and time.perf_counter() - started > args.max_seconds):
                break
        total = time.perf_counter() - started
        lake_bytes = sum(b.manifest.bytes for b in sink.batches)

    own = total - world.server_seconds
    expected = chat.count()
    print(f"channel: {args.messages:,} message ids ({expected:,} existing), stored {stored:,} in {len(sink.batches):,} "
          f"batches ({lake_bytes / 2**20:,.0f} MiB of JSON lines before gzip), {len(checkpoints):,} checkpoints")
    print(f"requests: {dict(world.counts)}")
    print(f"wall time: {total:,.1f} s  ->  {stored / total:,.0f} messages/s end to end")
    print(f"stand-in server time: {world.server_seconds:,.1f} s (building + serializing simulated answers)")
    print(f"our side (Telethon paging/parsing + our lines, batches, checkpoints): {own:,.1f} s  ->  "
          f"{stored / own:,.0f} messages/s")
    print(f"  of which lake writes (gzip + files + manifests): {sink.write_seconds:,.1f} s, "
          f"Message -> JSON line: {LINE_SECONDS[0]:,.1f} s; the rest is mostly Telethon parsing TL answers")
    ours = sink.write_seconds + LINE_SECONDS[0]
    print(f"  our collector code alone (lines + lake writes): {ours:,.1f} s  ->  {stored / ours:,.0f} messages/s")
    print(f"peak RSS: {peak_rss_mib():,.0f} MiB (at start: {rss_start:,.0f} MiB; target <= 300 MiB)")
    if stored < expected:
        print(f"stopped by --max-seconds: extrapolated to {expected:,} messages: "
              f"~{expected / (stored / total):,.0f} s end to end, ~{expected / (stored / own):,.0f} s of our side")


if __name__ == "__main__":
    main()
