"""Elasticsearch connection as a Dagster resource: the official 8.x client (pinned <9: it talks to 8.x and
9.x clusters), orjson, auth from ``EnvVar``."""

from __future__ import annotations

import dagster as dg
from elasticsearch import Elasticsearch
from pydantic import Field

from crawl_assets.index.client import DEFAULT_URL, CredentialsInUrl, build_client, check_hosts, client_settings_from_env

__all__ = ["DEFAULT_URL", "CredentialsInUrl", "ElasticsearchResource", "check_hosts"]


class ElasticsearchResource(dg.ConfigurableResource):
    """Where and how to reach the cluster. Fill secrets with ``dg.EnvVar`` so they never land in run config.

    Auth: ``api_key`` (the encoded form, or ``id:key``) wins over ``username``/``password``; both empty
    means no auth (the local docker-compose cluster and the tests' real node, security off).
    """

    hosts: list[str] = Field(default_factory=lambda: [DEFAULT_URL], description="Node URLs.")
    api_key: str = Field("", description="Encoded API key or 'id:key'; use EnvVar.")
    username: str = Field("", description="Basic auth user; use EnvVar.")
    password: str = Field("", description="Basic auth password; use EnvVar.")
    ca_certs: str = Field("", description="Path to a CA bundle for TLS; empty means the system store.")
    verify_certs: bool = True
    request_timeout: float = Field(30.0, gt=0, description="Seconds per request.")
    max_retries: int = Field(3, ge=0, description="Client-level retries for ordinary API calls.")
    retry_on_timeout: bool = True

    @classmethod
    def from_env(cls, url: str | None = None) -> "ElasticsearchResource":
        """Built from ``CRAWL_ES_URL`` (comma-separated), ``CRAWL_ES_API_KEY``, ``CRAWL_ES_USERNAME``,
        ``CRAWL_ES_PASSWORD``, ``CRAWL_ES_CA_CERTS``, ``CRAWL_ES_VERIFY_CERTS``: for the CLI, outside Dagster."""
        return cls(**client_settings_from_env(url))

    def get_client(self) -> Elasticsearch:
        """A new client; the caller closes it (``with resource.get_client() as es:``)."""
        return build_client(self.hosts, api_key=self.api_key, username=self.username, password=self.password,
                            ca_certs=self.ca_certs, verify_certs=self.verify_certs, request_timeout=self.request_timeout,
                            max_retries=self.max_retries, retry_on_timeout=self.retry_on_timeout)
