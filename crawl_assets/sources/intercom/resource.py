"""``IntercomResource``: per-tenant Intercom access tokens (``EnvVar``) and client settings.

Environment (docs/sources/intercom.md): ``CRAWL_INTERCOM_ACCESS_TOKEN[__TENANT[__NAME]]`` (see
``crawl_assets.sdk.tenant_secrets``), ``CRAWL_INTERCOM_BASE_URL`` (another host: a regional
``https://api.eu.intercom.io``, or the stand-in in tests).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from crawl_assets.registry import SourceEntry
from crawl_assets.sources.intercom.client import DEFAULT_BASE_URL, IntercomClient, new_client
from crawl_assets.sdk.rest_resource import RestSourceResource
from crawl_assets.sources.intercom.spec import SPEC


class IntercomResource(RestSourceResource):
    """Intercom REST access for ``intercom_conversations_raw``."""

    ENV: ClassVar[str] = "CRAWL_INTERCOM"
    SECRET: ClassVar[str] = SPEC.pull.secret if SPEC.pull else ""
    DEFAULT_BASE_URL: ClassVar[str] = DEFAULT_BASE_URL

    low_watermark: int = Field(5, ge=0, description="Wait for the window reset once this few requests remain.")

    def client(self, entry: SourceEntry) -> IntercomClient:
        """A client with the token of the entry's tenant and credential name."""
        return new_client(self.root_url(), self.secret(entry.tenant, entry.credential), self.retry_settings(),
                          low_watermark=self.low_watermark, timeout_seconds=self.timeout_seconds)
