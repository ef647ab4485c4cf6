"""The resources not owned by one platform, so assets never read paths or clients from globals: the lake and the
registry, and the Elasticsearch connection (the official 8.x client, pinned <9: it talks to 8.x and 9.x clusters;
orjson; auth from ``EnvVar``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import dagster as dg
from pydantic import Field

from crawl_assets import settings
from crawl_assets.index.client import DEFAULT_URL, CredentialsInUrl, build_client, check_hosts
from crawl_assets.lake import Lake
from crawl_assets.registry import Registry, load_registry
from crawl_assets.settings import ElasticsearchSettings

if TYPE_CHECKING:  # the client loads in the steps that build one (``get_client``), not with the definitions
    from elasticsearch import Elasticsearch

__all__ = ["DEFAULT_URL", "CredentialsInUrl", "ElasticsearchResource", "LakeResource", "RegistryResource",
           "check_hosts"]


class LakeResource(dg.ConfigurableResource):
    """Lake root; empty means ``CRAWL_LAKE`` or ``$DAGSTER_HOME/lake``."""

    root: str = ""

    def lake(self) -> Lake:
        return Lake(self.root or settings.lake_root())


class RegistryResource(dg.ConfigurableResource):
    """Registry file; empty means ``CRAWL_REGISTRY`` or ``$DAGSTER_HOME/sources.yaml``."""

    path: str = ""

    def load(self) -> Registry:
        return load_registry(self.path or settings.registry_path())


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
    def from_settings(cls, es: ElasticsearchSettings, *, url: str | None = None, default_url: str = "",
                      secrets_as_env: bool = False) -> "ElasticsearchResource":
        """The resource for ``es`` (``url`` wins over its hosts; neither means ``default_url``'s, none = no cluster).

        ``secrets_as_env``: the API key and password as ``EnvVar``s, so their values stay out of run config and
        instance snapshots (the definitions); plain values for the CLI, outside Dagster. A URL with credentials
        is refused (``CredentialsInUrl``): the hosts are stored with the instance's snapshots."""
        def secret(name: str, value: str) -> dg.EnvVar | str:
            return dg.EnvVar(name) if value and secrets_as_env else value

        return cls(hosts=check_hosts(es.host_list(url, default_url)), api_key=secret("CRAWL_ES_API_KEY", es.api_key),
                   username=es.username, password=secret("CRAWL_ES_PASSWORD", es.password), ca_certs=es.ca_certs,
                   verify_certs=es.verify_certs)

    @classmethod
    def from_env(cls, url: str | None = None) -> "ElasticsearchResource":
        """For the CLI: ``CRAWL_ES_*`` as set now, ``url`` winning over ``CRAWL_ES_URL``, else localhost."""
        return cls.from_settings(settings.elasticsearch(), url=url, default_url=DEFAULT_URL)

    def get_client(self) -> Elasticsearch:
        """A new client; the caller closes it (``with resource.get_client() as es:``)."""
        return build_client(self.hosts, api_key=self.api_key, username=self.username, password=self.password,
                            ca_certs=self.ca_certs, verify_certs=self.verify_certs, request_timeout=self.request_timeout,
                            max_retries=self.max_retries, retry_on_timeout=self.retry_on_timeout)
