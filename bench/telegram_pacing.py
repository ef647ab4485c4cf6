"""A simulated backfill of a large channel (default 1M messages) against a stand-in that answers FLOOD_WAIT as
Telegram does, in simulated time: the account's learnt pace beside a fixed pace (the collector before it
learnt from flood waits) and Telethon's default handling (no spacing; waits up to 60 s slept, longer raised).

Each configuration runs the way the scheduler would: runs of ``--per-run`` messages, a run ended by a long
flood wait is retried after it (the step's ``RetryRequested``), until the history is complete. Prints per
configuration the flood waits (count, longest, total), the simulated time to the end, messages per simulated
hour, requests the flood control let through per window at most (never above its limit), and the run's pace
series (the metadata a materialization plots) in a few points.

    python bench/telegram_pacing.py [--messages 1000000] [--limit 30] [--window 60] [--only learnt]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from crawl_assets.lake import Lake  # noqa: E402
from crawl_assets.registry import SourceEntry  # noqa: E402
from crawl_assets.sdk.errors import RetryLater  # noqa: E402
from crawl_assets.sdk.sync import CollectEnv  # noqa: E402
from crawl_assets.sources.telegram.collect import collect  # noqa: E402
from crawl_assets.sources.telegram.resource import TelegramCredential, TelegramResource  # noqa: E402
from crawl_assets_tests.standins import telegram_mtproto as tm  # noqa: E402

CONFIGS = {
    # name: TelegramResource fields
    "learnt": {"request_interval_seconds": 1.0},  # the defaults: slower after each wait, back with a 1 h half-life
    "fixed 1 s": {"request_interval_seconds": 1.0, "flood_backoff": 1.0},
    "telethon default": {"request_interval_seconds": 0.0, "flood_backoff": 1.0},
}


class Quiet:
    def info(self, msg: str) -> None:
        pass

    warning = error = debug = info


class Checkpoints:
    def __init__(self) -> None:
        self.state: dict = {}

    def load(self) -> dict:
        return self.state

    def save(self, state: dict) -> None:
        self.state = state


def run(name: str, fields: dict, args: argparse.Namespace) -> dict:
    world = tm.World()
    clock = tm.SimClock()
    world.flood = tm.FloodControl(now=clock.now, limit=args.limit, window=args.window)
    world.channel("bench", messages=args.messages, step_seconds=30)
    tm.use(world)
    started_at, wall = clock.now(), time.perf_counter()
    runs = retries = 0
    series: list = []
    with tempfile.TemporaryDirectory() as tmp:
        resource = TelegramResource(
            credentials={"default:": TelegramCredential(api_id="1", api_hash="0" * 32, session=tm.session_for())},
            lock_dir=f"{tmp}/locks", max_pages_per_run=10**9, max_messages_per_run=args.per_run,
            pages_per_checkpoint=10, **fields).with_clock(clock.clock())
        entry = SourceEntry(name="bench", platform="telegram", kind="channel", identifier="@bench")
        checkpoints = Checkpoints()
        while True:
            runs += 1
            try:
                meta = collect(resource, entry, CollectEnv(Lake(f"{tmp}/lake"), f"run{runs}", checkpoints, Quiet())).metadata
            except RetryLater as exc:
                retries += 1
                clock.advance(exc.seconds)
                if clock.now() - started_at > args.give_up_days * 86400:
                    break
                continue
            series.extend(meta["pace_series"][:: max(1, len(meta["pace_series"]) // 3)])
            if meta["history_complete"] or clock.now() - started_at > args.give_up_days * 86400:
                break
    tm.release()
    state = checkpoints.state  # every id between oldest and newest exists in the simulated channel
    stored = state["newest_id"] - state["oldest_id"] + 1 if state.get("newest_id") else 0
    hours = (clock.now() - started_at) / 3600
    waits = [w for _, _, w in world.flood.waits]
    return {"name": name, "done": bool(checkpoints.state.get("history_complete")), "stored": stored, "hours": hours,
            "waits": len(waits), "longest": max(waits, default=0), "waited_h": sum(waits) / 3600, "runs": runs,
            "retries": retries, "per_hour": stored / hours if hours else 0.0, "wall": time.perf_counter() - wall,
            "requests": world.counts["GetHistoryRequest"], "series": series[:6]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--per-run", type=int, default=20_000, help="messages per run (max_messages_per_run)")
    ap.add_argument("--limit", type=int, default=30, help="flood control: history calls per window")
    ap.add_argument("--window", type=float, default=60.0, help="flood control: window in seconds")
    ap.add_argument("--give-up-days", type=float, default=30.0, help="stop a configuration after this simulated time")
    ap.add_argument("--only", choices=sorted(CONFIGS), action="append", help="run only these configurations")
    args = ap.parse_args()
    print(f"channel of {args.messages:,} messages; flood control: {args.limit} history calls per {args.window:g} s "
          f"(one per {args.window / args.limit:g} s sustained), waits doubling while a client keeps pushing; "
          f"runs of {args.per_run:,} messages")
    print(f"{'pacing':<17} {'done':>5} {'stored':>10} {'sim hours':>10} {'msgs/sim h':>11} {'requests':>9} "
          f"{'waits':>6} {'longest s':>10} {'waited h':>9} {'runs':>5} {'retries':>8} {'wall s':>7}")
    results = [run(name, CONFIGS[name], args) for name in (args.only or CONFIGS)]
    for r in results:
        print(f"{r['name']:<17} {str(r['done']):>5} {r['stored']:>10,} {r['hours']:>10,.1f} {r['per_hour']:>11,.0f} "
              f"{r['requests']:>9,} {r['waits']:>6,} {r['longest']:>10,} {r['waited_h']:>9,.2f} {r['runs']:>5,} "
              f"{r['retries']:>8,} {r['wall']:>7,.0f}")
    for r in results:
        print(f"pace series of {r['name']} ([request, interval s, flood wait s], a few points): {r['series']}")


if __name__ == "__main__":
    main()
