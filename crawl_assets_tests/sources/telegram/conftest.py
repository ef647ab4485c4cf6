"""Fixtures for the Telegram collector: a simulated Telegram, a lake, and a way to run one sync."""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sources.telegram.resource import TelegramCredential, TelegramResource
from crawl_assets.sources.telegram.sink import LakeSink
from crawl_assets.sdk.sync import SyncResult
from crawl_assets.sources.telegram.sync import run_sync
from crawl_assets.sdk.tenant_secrets import credential_key
from crawl_assets_tests.standins import telegram_mtproto as tm
from crawl_assets_tests.fakes import FAKE_API_HASH

SESSION = tm.session_for("default")  # the stand-in's account "default" (its auth key says so)


@pytest.fixture
def world() -> tm.World:
    w = tm.World()
    tm.use(w)
    yield w
    tm.release()


@pytest.fixture
def network(world: tm.World) -> tm.Network:
    """The world on real sockets: data centres 2 and 4 that refuse every connection not coming from a proxy."""
    net = tm.Network(functools.partial(tm.answer, world), proxied_only=True)
    world.network = net
    tm.forget_telethon_config()
    yield net
    world.network = None
    tm.forget_telethon_config()
    net.close()


def make_resource(tmp_path: Path, *, names: tuple[str, ...] = ("default",), **kwargs: Any) -> TelegramResource:
    settings = {"request_interval_seconds": 0.0, "network_backoff_seconds": 0.01, "account_wait_seconds": 1.0,
                "lock_dir": str(tmp_path / "locks"), **kwargs}
    creds = {credential_key("default", None if n == "default" else n):
             TelegramCredential(api_id="12345", api_hash=FAKE_API_HASH, session=tm.session_for(n)) for n in names}
    return TelegramResource(credentials=creds, **settings)


def entry(name: str, identifier: str, *, refresh_window: int = 200, horizon: int | None = None,
          credential: str | None = None, **options: Any) -> SourceEntry:
    return SourceEntry(name=name, platform="telegram", kind="channel", identifier=identifier, credential=credential,
                       policy={"refresh_window": refresh_window, "history_horizon_days": horizon}, options=options)


@dataclass
class Harness:
    """Runs syncs of one source against the stand-in, keeping the lake and the saved checkpoints."""

    lake: Lake
    resource: TelegramResource
    source: SourceEntry
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    clock: tm.SimClock | None = None  # the pacing's simulated time (advance it to let an account's rest pass)

    @property
    def state(self) -> dict[str, Any]:
        return self.checkpoints[-1] if self.checkpoints else {}

    def sync(self, **budget: Any) -> SyncResult:
        sink = LakeSink(self.lake, self.source, "testrun", self.checkpoints.append)
        res = self.resource if not budget else self.resource.model_copy(update=budget)

        async def go() -> SyncResult:
            async with res.connected(self.source.tenant, self.source.credential) as client:
                self.last_client = client
                return await run_sync(client, self.source, self.state, sink, res.budget())

        return asyncio.run(go())

    def lines(self, kind: str | None = None) -> list[dict[str, Any]]:
        out = []
        for batch in self.lake.raw_batches(self.source.tenant, "telegram", self.source.key):
            if kind and batch.manifest.extra.get("kind") != kind:
                continue
            with self.lake.open_raw(batch) as fh:
                out.extend(orjson.loads(line) for line in fh if line.strip())
        return out

    def stored_ids(self, chat_id: int) -> list[int]:
        return [m["id"] for m in self.lines() if m.get("_") in ("Message", "MessageService")
                and m["peer_id"].get("channel_id") == chat_id]


@pytest.fixture
def harness_factory(tmp_path: Path, world: tm.World):
    def make(source: SourceEntry, **resource_kwargs: Any) -> Harness:
        lake = Lake(str(tmp_path / "lake"))
        names = tuple({source.credential or "default", "default"})
        clock = tm.SimClock(time.time())
        resource = make_resource(tmp_path, names=names, **resource_kwargs).with_clock(clock.clock())
        return Harness(lake, resource, source, clock=clock)

    return make
