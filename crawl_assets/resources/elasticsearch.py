"""Elasticsearch connection as a Dagster resource: the official 8.x client (pinned <9: it talks to 8.x and
9.x clusters), orjson, auth from ``EnvVar``."""

from __future__ import annotations

import os
from collections.abc import Iterable
from urllib.parse import urlsplit

import dagster as dg
from elasticsearch import Elasticsearch
from elasticsearch.serializer import OrjsonSerializer
from pydantic import Field

DEFAULT_URL = "http://localhost:9200"


class CredentialsInUrl(ValueError):
    """A node URL carries user info (``user:password@``). Refused: the hosts are resource config, which
    Dagster stores in the instance (run config and repository snapshots); the message holds no part of it."""


def check_hosts(hosts: Iterable[str], variable: str = "CRAWL_ES_URL") -> list[str]:
    """``hosts`` when none carries credentials, else ``CredentialsInUrl`` naming the variables to use."""
    out = list(hosts)
    for host in out:
        try:
            split = urlsplit(host if "://" in host else f"http://{host}")
            has_userinfo = split.username is not None or split.password is not None
        except ValueError:
            has_userinfo = "@" in host
        if has_userinfo:
            raise CredentialsInUrl(
                f"{variable} must not hold credentials (user:password@ in the URL would be stored with the Dagster "
                "instance): give the URL without them and set CRAWL_ES_USERNAME and CRAWL_ES_PASSWORD, or CRAWL_ES_API_KEY")
    return out


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
        env = os.environ
        hosts = check_hosts(h.strip() for h in (url or env.get("CRAWL_ES_URL") or DEFAULT_URL).split(",") if h.strip())
        return cls(
            hosts=hosts,
            api_key=env.get("CRAWL_ES_API_KEY", ""),
            username=env.get("CRAWL_ES_USERNAME", ""),
            password=env.get("CRAWL_ES_PASSWORD", ""),
            ca_certs=env.get("CRAWL_ES_CA_CERTS", ""),
            verify_certs=env.get("CRAWL_ES_VERIFY_CERTS", "true").lower() not in ("0", "false", "no"),
        )

    def get_client(self) -> Elasticsearch:
        """A new client; the caller closes it (``with resource.get_client() as es:``)."""
        check_hosts(self.hosts, "hosts")
        kwargs: dict = {
            "request_timeout": self.request_timeout,
            "max_retries": self.max_retries,
            "retry_on_timeout": self.retry_on_timeout,
            "serializer": OrjsonSerializer(),
        }
        if self.api_key:
            key = self.api_key
            kwargs["api_key"] = tuple(key.split(":", 1)) if ":" in key else key
        elif self.username:
            kwargs["basic_auth"] = (self.username, self.password)
        if any(h.startswith("https") for h in self.hosts):
            kwargs["verify_certs"] = self.verify_certs
            if self.ca_certs:
                kwargs["ca_certs"] = self.ca_certs
        return Elasticsearch(self.hosts, **kwargs)
