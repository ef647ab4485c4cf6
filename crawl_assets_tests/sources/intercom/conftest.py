"""Fixtures for Intercom: a workspace of conversations on the stand-in, clients, a real lake."""

from __future__ import annotations

import pytest

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sources.intercom.client import new_client
from crawl_assets.sdk.http import RetrySettings
from crawl_assets_tests.sources.feedback_helpers import LakeStore
from crawl_assets_tests.standins.intercom_api import IntercomServer, make_conversation

FAST = RetrySettings(max_retries=2, backoff_seconds=0.01, backoff_cap_seconds=0.05, max_inline_wait_seconds=5.0,
                     reset_margin_seconds=0.05)
BASE = 1_780_000_000


@pytest.fixture
def conversations():
    return [make_conversation(i, BASE + i * 100, BASE + i * 100 + 50, parts=1 + i % 4,
                              text="سلام، برنامه بعد از آپدیت باز نمی‌شود" if i % 3 == 0 else "Hello, my app crashes")
            for i in range(1, 31)]


@pytest.fixture
def server(conversations):
    with IntercomServer(workspaces={"tok-a": ("wsa", conversations)}) as srv:
        yield srv


@pytest.fixture
def entry():
    return SourceEntry(name="support", tenant="acme", platform="intercom", kind="workspace", identifier="wsa",
                       options={"per_page": 7, "conversations_per_batch": 10})


@pytest.fixture
def client(server):
    c = new_client(server.url, "tok-a", FAST)
    yield c
    c.http.close()


@pytest.fixture
def store(tmp_path, entry):
    return LakeStore(Lake(str(tmp_path / "lake")), entry, "intercom")
