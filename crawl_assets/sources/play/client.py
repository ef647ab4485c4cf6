"""The Google Play Developer API client: ``reviews.list`` of one app, token pagination.

Authorization comes from a :class:`TokenSource` per request (a 401 triggers one token refresh first).
The API's quota answers 429 without ``Retry-After``; the shared client then waits its default.
"""

from __future__ import annotations

from crawl_assets.sources.play.auth import TokenSource
from crawl_assets.sdk.http import HttpClient, Page, RetrySettings, new_http_client

DEFAULT_BASE_URL = "https://androidpublisher.googleapis.com"
REVIEWS = "reviews.list"


class PlayClient(HttpClient):
    """Reviews of the apps one service account may read."""

    def reviews(self, package: str, *, token: str | None, max_results: int = 100,
                translation_language: str | None = None) -> Page:
        params: dict[str, str | int] = {"maxResults": max_results}
        if token:
            params["token"] = token
        if translation_language:
            params["translationLanguage"] = translation_language
        return self.get(REVIEWS, f"/androidpublisher/v3/applications/{package}/reviews", params)


def new_client(base_url: str, tokens: TokenSource, settings: RetrySettings, *, timeout_seconds: float = 30.0) -> PlayClient:
    http = new_http_client(base_url, timeout_seconds=timeout_seconds)
    return PlayClient(http, api="play", settings=settings, auth=tokens.headers)
