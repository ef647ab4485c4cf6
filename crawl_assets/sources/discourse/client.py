"""The Discourse JSON API client: latest posts (``/posts.json?before=``), topics and their posts by id,
one post by its number in a topic (``/posts/by_number/{topic}/{n}.json``), categories. Public forums
need no key; a private one takes ``Api-Key`` + ``Api-Username`` headers.

Discourse throttles with 429 and ``Retry-After`` (seconds); the shared client waits that long in place
or ends the step with ``RetryRequested`` when it is longer.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from crawl_assets.sdk.http import HttpClient, Page, RateHeaders, RetrySettings, new_http_client

POSTS = "posts"
TOPIC = "topic"
TOPIC_POSTS = "topic_posts"
POST_BY_NUMBER = "post_by_number"
CATEGORIES = "categories"
IDS_PER_REQUEST = 20  # Discourse's own chunk size for post_ids[]


def forum_host(identifier: str) -> str:
    """The host a record key uses (``meta.discourse.org``) from the registered forum URL."""
    split = urlsplit(identifier if "://" in identifier else f"https://{identifier}")
    if not split.hostname:
        raise ValueError(f"not a forum URL: {identifier!r}")
    return split.netloc.lower()


def forum_root(identifier: str) -> str:
    split = urlsplit(identifier if "://" in identifier else f"https://{identifier}")
    return f"{split.scheme}://{split.netloc}{split.path.rstrip('/')}"


class DiscourseClient(HttpClient):
    """One forum, optionally with an API key."""

    def latest_posts(self, before: int | None) -> Page:
        return self.get(POSTS, "/posts.json", {"before": before} if before else None)

    def topic(self, topic_id: int) -> Page:
        return self.get(TOPIC, f"/t/{topic_id}.json")

    def topic_posts(self, topic_id: int, post_ids: list[int]) -> Page:
        if not 0 < len(post_ids) <= IDS_PER_REQUEST:
            raise ValueError(f"topic_posts takes 1-{IDS_PER_REQUEST} ids, got {len(post_ids)}")
        return self.get(TOPIC_POSTS, f"/t/{topic_id}/posts.json", [("post_ids[]", i) for i in post_ids])

    def post_by_number(self, topic_id: int, post_number: int) -> Page:
        """One post as ``/posts/{id}.json`` gives it (PostsController#by_number); 404 when deleted."""
        return self.get(POST_BY_NUMBER, f"/posts/by_number/{topic_id}/{post_number}.json")

    def categories(self) -> Page:
        return self.get(CATEGORIES, "/categories.json", {"include_subcategories": "true"})


def new_client(identifier: str, settings: RetrySettings, *, api_key: str = "", api_username: str = "",
               base_url: str = "", timeout_seconds: float = 30.0) -> DiscourseClient:
    """A client for the forum at ``identifier`` (``base_url`` overrides where requests go, for tests)."""
    headers = {"Api-Key": api_key, "Api-Username": api_username or "system"} if api_key else {}
    http = new_http_client(base_url or forum_root(identifier), headers=headers, timeout_seconds=timeout_seconds)
    return DiscourseClient(http, api="discourse", settings=settings, rate=RateHeaders())


def open_client(resource: Any, entry: Any) -> DiscourseClient:
    """The client of one sync (``PullSpec.client``), from the shared REST resource.

    A source without ``credential`` reads the forum anonymously (public JSON API). With ``credential: NAME``
    the key comes from ``CRAWL_DISCOURSE_API_KEY__<TENANT>__<NAME>`` and the user it acts as from the entry's
    ``options.api_username`` (default ``system``). ``CRAWL_DISCOURSE_BASE_URL`` sends every request to one
    host instead of each forum's own (a proxy, or the stand-in in tests)."""
    key = resource.secret(entry.tenant, entry.credential) if entry.credential else ""
    return new_client(entry.identifier, resource.retry_settings(), api_key=key,
                      api_username=entry.typed_options.api_username or "", base_url=resource.base_url,
                      timeout_seconds=resource.timeout_seconds)
