"""The client of a public channel's web preview (``https://t.me/s/<channel>``), on the shared request loop
(``sdk/http.py``): pages kept as received (HTML, not JSON), bounded reads, a minimum gap between two pages,
429 waited out by its ``Retry-After`` (longer waits end the step, retried after the wait).

``?before=N`` is the page of the messages older than N, ``?after=N`` of those newer than N. A channel without
a public preview (private, a group, a user, a name nobody holds) is answered by a redirect to its
``t.me/<name>`` page: the source is paused with that reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from crawl_assets.sdk.errors import ErrorRules
from crawl_assets.sdk.http import HeaderBudget, HttpClient, Pacing, Page, RateHeaders, RetrySettings, new_http_client
from crawl_assets.sources.telegram.tme_links import is_username

DEFAULT_BASE_URL = "https://t.me"
PAGE_ENDPOINT = "s"
MAX_PAGE_BYTES = 4 << 20  # a preview page of 20 messages is well under 1 MiB
NO_PREVIEW = ("the channel has no public web preview (private, a group or a user, or the name is not taken): "
              "register it with --kind channel and an account instead")


def _reason(resp: httpx.Response, raw: bytes) -> str:
    return resp.reason_phrase  # an HTML error page says nothing a log should carry


class PagePacing(HeaderBudget):
    """``Retry-After`` after a 429 (the shared header budget) and at least ``interval`` seconds between pages."""

    def __init__(self, interval: float, *, margin: float, clock: Callable[[], float] = time.time):
        super().__init__(RateHeaders(), margin=margin, clock=clock)
        self.interval = interval
        self.last: float | None = None

    def wait_before(self, endpoint: str) -> float:
        wait = super().wait_before(endpoint)
        if self.last is not None:
            wait = max(wait, self.last + self.interval - self.clock())
        return wait

    def sent(self, endpoint: str) -> None:
        self.last = self.clock()  # a retry after a 429's wait is sent at once; the page after it keeps its gap


class TelegramWebClient(HttpClient):
    """One channel's preview pages."""

    RULES = ErrorRules(json_body=False, refresh_auth_on=frozenset(), reason=_reason,
                       messages={301: NO_PREVIEW, 302: NO_PREVIEW, 303: NO_PREVIEW, 307: NO_PREVIEW, 404: NO_PREVIEW})

    def __init__(self, http: httpx.Client, *, interval: float = 1.0, **kwargs: Any):
        self.interval = interval
        super().__init__(http, api="telegram web", max_response_bytes=MAX_PAGE_BYTES, **kwargs)

    def pacing(self, rate: RateHeaders) -> Pacing:
        return PagePacing(self.interval, margin=self.settings.reset_margin_seconds, clock=self.clock)

    def page(self, channel: str, *, before: int | None = None, after: int | None = None) -> Page:
        """The newest page, or the one before / after a message id."""
        if not is_username(channel):
            raise ValueError(f"not a channel username: {channel!r}"[:120])
        params = {"before": before} if before else {"after": after} if after else None
        return self.get(PAGE_ENDPOINT, f"/s/{channel}", params)


def new_client(base_url: str = "", *, interval: float = 1.0, settings: RetrySettings | None = None,
               timeout_seconds: float = 30.0, sleep: Callable[[float], None] = time.sleep) -> TelegramWebClient:
    """A client of ``base_url`` (default ``https://t.me``; the stand-in in tests); pages in English, so the page's
    own words ("edited") read the same everywhere."""
    http = new_http_client(base_url or DEFAULT_BASE_URL, accept="text/html", timeout_seconds=timeout_seconds,
                           headers={"Accept-Language": "en"})
    return TelegramWebClient(http, interval=interval, settings=settings, sleep=sleep)
