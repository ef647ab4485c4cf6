"""``DiscourseResource``: optional per-tenant API keys (``EnvVar``) and client settings.

A source without ``credential`` reads the forum anonymously (public JSON API). With ``credential: NAME``
the key comes from ``CRAWL_DISCOURSE_API_KEY__<TENANT>__<NAME>`` (see ``tenant_secrets``) and the user it
acts as from the entry's ``options.api_username`` (default ``system``). ``CRAWL_DISCOURSE_BASE_URL``
sends every request to one host instead of each forum's own (a proxy, or the stand-in in tests).
"""

from __future__ import annotations

from typing import ClassVar

from crawl_assets.registry import SourceEntry
from crawl_assets.sources.discourse.client import DiscourseClient, new_client
from crawl_assets.sources.rest_resource import RestSourceResource


class DiscourseResource(RestSourceResource):
    """Discourse access for ``discourse_posts_raw``."""

    ENV: ClassVar[str] = "CRAWL_DISCOURSE"
    SECRET: ClassVar[str] = "API_KEY"

    def client(self, entry: SourceEntry) -> DiscourseClient:
        key = self.secret(entry.tenant, entry.credential) if entry.credential else ""
        return new_client(entry.identifier, self.retry_settings(), api_key=key,
                          api_username=str(entry.options.get("api_username") or ""), base_url=self.base_url,
                          timeout_seconds=self.timeout_seconds)
