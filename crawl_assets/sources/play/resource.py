"""``PlayResource``: per-tenant Google service-account keys (``EnvVar``) and client settings.

Environment (docs/sources/play.md): ``CRAWL_PLAY_SERVICE_ACCOUNT_JSON[__TENANT[__NAME]]`` holds the
key file's JSON (or its path); ``CRAWL_PLAY_BASE_URL`` another API host; ``CRAWL_PLAY_TOKEN_URI`` another
token endpoint than the key's ``token_uri`` (tests point both at the stand-in).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from crawl_assets.registry import SourceEntry
from crawl_assets.sources.play.auth import ServiceAccount, TokenSource
from crawl_assets.sources.play.client import DEFAULT_BASE_URL, PlayClient, new_client
from crawl_assets.sdk.rest_resource import RestSourceResource
from crawl_assets.sources.play.spec import SPEC


class PlayResource(RestSourceResource):
    """Google Play Developer API access for ``play_reviews_raw``."""

    ENV: ClassVar[str] = "CRAWL_PLAY"
    SECRET: ClassVar[str] = SPEC.pull.secret if SPEC.pull else ""
    DEFAULT_BASE_URL: ClassVar[str] = DEFAULT_BASE_URL
    ENV_TUNABLES: ClassVar[tuple[str, ...]] = ("base_url", "token_uri")

    token_uri: str = Field("", description="Token endpoint overriding the key's token_uri ('' = the key's).")
    max_requests_per_run: int = Field(150, gt=0, description="reviews.list has a quota of 200 GETs per hour.")

    def client(self, entry: SourceEntry) -> PlayClient:
        """A client authorized as the entry's tenant's service account (``ValueError`` on a broken key)."""
        account = ServiceAccount.parse(self.secret(entry.tenant, entry.credential))
        tokens = TokenSource(account, token_uri=self.token_uri, timeout_seconds=self.timeout_seconds)
        return new_client(self.root_url(), tokens, self.retry_settings(), timeout_seconds=self.timeout_seconds)
