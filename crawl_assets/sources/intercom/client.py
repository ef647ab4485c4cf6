"""The Intercom REST client: conversation search (``starting_after`` paging) and conversation detail.

Intercom spreads its limit over short windows and reports it in ``X-RateLimit-Remaining`` and
``X-RateLimit-Reset`` (epoch seconds); the client waits for the reset once fewer than
``low_watermark`` requests remain, instead of running into 429s.
"""

from __future__ import annotations

from typing import Any

from crawl_assets.sdk.http import HttpClient, Page, RateHeaders, RetrySettings, new_http_client

DEFAULT_BASE_URL = "https://api.intercom.io"
API_VERSION = "2.11"
SEARCH = "conversations/search"
CONVERSATION = "conversations/get"


def intercom_rate(low_watermark: int) -> RateHeaders:
    return RateHeaders(remaining="x-ratelimit-remaining", reset="x-ratelimit-reset", reset_kind="epoch",
                       low_watermark=low_watermark)


class IntercomClient(HttpClient):
    """Calls one workspace's API with its access token."""

    def search_updated(self, after: int, *, per_page: int, starting_after: str | None) -> Page:
        """Conversations with ``updated_at > after`` (oldest first), one page."""
        pagination: dict[str, Any] = {"per_page": per_page}
        if starting_after:
            pagination["starting_after"] = starting_after
        body = {"query": {"field": "updated_at", "operator": ">", "value": after},
                "pagination": pagination, "sort": {"field": "updated_at", "order": "ascending"}}
        return self.post(SEARCH, "/conversations/search", body)

    def conversation(self, conversation_id: str) -> Page:
        """One conversation with its parts (bodies are HTML)."""
        return self.get(CONVERSATION, f"/conversations/{conversation_id}")


def new_client(base_url: str, token: str, settings: RetrySettings, *, low_watermark: int = 5,
               timeout_seconds: float = 30.0) -> IntercomClient:
    http = new_http_client(base_url, headers={"Authorization": f"Bearer {token}", "Intercom-Version": API_VERSION},
                           timeout_seconds=timeout_seconds)
    return IntercomClient(http, api="intercom", settings=settings, rate=intercom_rate(low_watermark))
