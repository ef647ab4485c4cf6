"""Account safety: each account's pace follows its own flood waits (slower after each, back slowly), an optional
hourly cap per account, a tenant's pool shared out among its sources, and one run per account at a time.

Time is simulated (``SimClock``): the pace's waits and the stand-in's flood control (``FloodControl``, which
answers FLOOD_WAIT with waits that escalate while a client keeps pushing) run on the same clock."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest

from crawl_assets.lake import Lake
from crawl_assets.sdk.errors import RetryLater
from crawl_assets.sdk.sync import CollectEnv
from crawl_assets.sources.telegram.collect import collect
from crawl_assets.sources.telegram.errors import LongFloodWait
from crawl_assets.sources.telegram.pacing import AccountLock, Pace, PaceNote, PaceSettings
from crawl_assets_tests.sources.telegram.conftest import entry, make_resource
from crawl_assets_tests.sources.telegram.test_proxy import Checkpoints, Log
from crawl_assets_tests.standins import telegram_mtproto as tm

LIMIT, WINDOW = 10, 30.0  # the model's flood control: 10 history calls per 30 s, one per 3 s sustained


def flooded_world(world: tm.World) -> tm.SimClock:
    clock = tm.SimClock()
    world.flood = tm.FloodControl(now=clock.now, limit=LIMIT, window=WINDOW)
    return clock


def collect_once(tmp_path, resource, source, checkpoints: Checkpoints | None = None):
    env = CollectEnv(Lake(str(tmp_path / "lake")), "run", checkpoints or Checkpoints(), Log())
    return collect(resource, source, env)


def test_a_backfill_slows_to_what_the_flood_control_allows_and_stays_there(world, tmp_path):
    clock = flooded_world(world)
    world.channel("big", messages=8_000)
    resource = make_resource(tmp_path, request_interval_seconds=1.0, flood_sleep_threshold_seconds=120,
                             max_pages_per_run=1_000, max_messages_per_run=100_000).with_clock(clock.clock())
    meta = collect_once(tmp_path, resource, entry("big", "@big")).metadata

    assert meta["history_complete"] and meta["records_new"] == 8_000
    waits = [w for _, _, w in world.flood.waits]
    # it started at one request a second (three times what the model allows): two waits taught it the pace;
    # neither escalated past the window, and no wait came once the pace was learnt
    assert 1 <= len(waits) <= 2 and max(waits) <= WINDOW
    assert meta["flood_waits"] == len(waits) and meta["rate_limit_wait_seconds"] == sum(waits)
    assert meta["pace_interval_seconds"] >= WINDOW / LIMIT
    last_flood = max(at for at, _, _ in world.flood.waits)
    assert clock.now() - last_flood > 0.8 * (clock.now() - tm.SimClock().now())  # the rest of the run flowed
    # the pace through the run, for a plot: [request number, interval, flood wait], every flood wait kept
    series = meta["pace_series"]
    assert [row[2] for row in series if row[2]] == waits
    assert series[0][1] == 1.0 and series[-1][1] >= WINDOW / LIMIT
    assert json.loads(json.dumps(series)) == series and len(series) <= 130


def test_a_client_that_does_not_slow_down_meets_escalating_waits(world, tmp_path):
    """The control of the test above (the collector's pace before it learnt from flood waits): at a fixed pace
    the model's waits double until one is too long to sleep, and the run ends with a retry after it."""
    clock = flooded_world(world)
    world.channel("big", messages=8_000)
    resource = make_resource(tmp_path, request_interval_seconds=1.0, flood_sleep_threshold_seconds=120,
                             flood_backoff=1.0, max_pages_per_run=1_000,
                             max_messages_per_run=100_000).with_clock(clock.clock())
    with pytest.raises(RetryLater) as caught:
        collect_once(tmp_path, resource, entry("big", "@big"))
    waits = [w for _, _, w in world.flood.waits]
    assert waits == sorted(waits) and waits[-1] > 120 and len(waits) >= 3
    assert caught.value.seconds == waits[-1]


def test_the_pace_is_the_accounts_across_runs_and_sources_and_recovers_slowly(world, tmp_path):
    clock = flooded_world(world)
    for name in ("first", "second"):
        world.channel(name, messages=3_000)
    resource = make_resource(tmp_path, request_interval_seconds=1.0, flood_sleep_threshold_seconds=120,
                             pace_recovery_half_life_seconds=600).with_clock(clock.clock())
    first = collect_once(tmp_path, resource, entry("first", "@first")).metadata
    learnt = first["pace_interval_seconds"]
    assert first["flood_waits"] >= 1 and learnt >= WINDOW / LIMIT
    with AccountLock(tmp_path / "locks", "default", None, 0) as lock:  # what the account's lock keeps
        kept = Pace(PaceSettings(interval=1.0, recovery_half_life=600), lock.note, clock.clock())
        assert lock.note.floods == first["flood_waits"] and kept.interval() == pytest.approx(learnt, abs=0.01)
    # another source of the same account, right away: it starts at the learnt pace, and meets no flood wait
    second = collect_once(tmp_path, resource, entry("second", "@second")).metadata
    assert second["flood_waits"] == 0 and second["pace_series"][0][1] == pytest.approx(learnt, rel=0.05)
    # the extra spacing halves every half-life without a flood wait
    pace = Pace(PaceSettings(interval=1.0, recovery_half_life=600), PaceNote(interval=9.0, at=clock.now()), clock.clock())
    clock.advance(600)
    assert pace.interval() == pytest.approx(5.0)
    clock.advance(1200)
    assert pace.interval() == pytest.approx(2.0)


def test_the_hourly_cap_holds_the_accounts_requests_across_its_runs():
    clock = tm.SimClock(start=7200.0)
    note = PaceNote()

    async def burst(n: int, long_wait: float) -> Pace:
        pace = Pace(PaceSettings(interval=0.0, requests_per_hour=5, long_wait=long_wait), note, clock.clock())
        for _ in range(n):
            await pace.wait()
        return pace

    asyncio.run(burst(3, 60))
    clock.advance(100)
    with pytest.raises(LongFloodWait, match="hourly request budget is spent: 3500s to go"):
        asyncio.run(burst(3, 60))  # the 6th request of the hour would wait ~an hour: the run ends instead
    assert note.sent == 5
    clock.advance(3440)
    pace = asyncio.run(burst(2, 60))  # 60 s before the hour turns: short enough to wait in place
    assert pace.waited == pytest.approx(60.0) and note.sent == 2 and clock.now() == 7200.0 + 3600


def test_a_note_of_an_earlier_version_or_a_damaged_one_is_read_as_far_as_it_goes():
    assert PaceNote.parse("1767268800.250") == PaceNote(last=1767268800.25)
    assert PaceNote.parse("") == PaceNote() and PaceNote.parse("{not json") == PaceNote()
    assert PaceNote.parse('{"interval": "fast", "floods": 2, "last": 1e400}') == PaceNote(floods=2)
    note = PaceNote(last=1.5, interval=4.0, at=2.0, floods=3, rest_until=9.0, hour=0.0, sent=7)
    assert PaceNote.parse(note.dump()) == note and len(note.dump()) < 256


def test_sources_without_a_credential_are_spread_over_the_tenants_pool(world, tmp_path):
    resource = make_resource(tmp_path, names=("default", "alice", "bob", "carol"))
    keys = [f"default.telegram.s{i}" for i in range(60)]
    first = {k: resource.accounts_for("default", None, k)[0] for k in keys}
    assert Counter(first.values()).keys() == {None, "alice", "bob", "carol"}
    assert min(Counter(first.values()).values()) >= 8  # evenly enough
    assert first == {k: resource.accounts_for("default", None, k)[0] for k in keys}  # stable
    # an account leaving the pool moves only its own sources
    fewer = make_resource(tmp_path, names=("default", "alice", "carol"))
    moved = [k for k in keys if fewer.accounts_for("default", None, k)[0] != first[k]]
    assert moved and all(first[k] == "bob" for k in moved)
    assert resource.accounts_for("default", "bob", "x") == ["bob"]  # a named credential is used as named
    assert resource.accounts_for("acme", None, "x") == [None]  # no account: the default, reported as missing


def test_a_pooled_source_skips_a_busy_account_and_one_resting_from_a_flood_wait(world, tmp_path):
    world.channel("pooled", messages=50)
    resource = make_resource(tmp_path, names=("default", "alice", "bob"))
    source = entry("pooled", "@pooled")
    order = resource.accounts_for("default", None, source.key)
    with AccountLock(tmp_path / "locks", "default", order[0], 0):  # another run holds the first choice
        with AccountLock(tmp_path / "locks", "default", order[1], 0) as resting:
            resting.note.rest_until = 4e9  # and the second still rests from a long flood wait
        meta = collect_once(tmp_path, resource, source).metadata
    assert meta["credential"] == f"default:{order[2] or ''}"
    assert set(world.by_account) == {order[2] or "default"}
    # free again: the source goes back to its own account
    assert collect_once(tmp_path, resource, source).metadata["credential"] == f"default:{order[0] or ''}"
