"""Building an Elasticsearch client from settings, without Dagster (the API and the CLI use it directly;
``orchestration.resources.ElasticsearchResource`` is the Dagster face of the same settings).

Variables (``client_settings_from_env``): ``CRAWL_ES_URL`` (comma-separated), ``CRAWL_ES_API_KEY``,
``CRAWL_ES_USERNAME``, ``CRAWL_ES_PASSWORD``, ``CRAWL_ES_CA_CERTS``, ``CRAWL_ES_VERIFY_CERTS``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from crawl_assets import settings

if TYPE_CHECKING:  # the client (~26 MiB with its transports) loads when one is built, not with its settings
    from elasticsearch import AsyncElasticsearch, Elasticsearch

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


def client_settings_from_env(url: str | None = None) -> dict[str, Any]:
    """The client's keyword arguments from ``settings.elasticsearch()`` (the one reader of the variables);
    ``url`` wins over ``CRAWL_ES_URL``, and neither means ``DEFAULT_URL``."""
    es = settings.elasticsearch()
    return {
        "hosts": check_hosts(es.host_list(url, DEFAULT_URL)),
        "api_key": es.api_key,
        "username": es.username,
        "password": es.password,
        "ca_certs": es.ca_certs,
        "verify_certs": es.verify_certs,
    }


def _client_kwargs(hosts: list[str], *, api_key: str = "", username: str = "", password: str = "", ca_certs: str = "",
                   verify_certs: bool = True, request_timeout: float = 30.0, max_retries: int = 3,
                   retry_on_timeout: bool = True) -> dict[str, Any]:
    from elasticsearch.serializer import OrjsonSerializer

    check_hosts(hosts, "hosts")
    kwargs: dict = {"request_timeout": request_timeout, "max_retries": max_retries,
                    "retry_on_timeout": retry_on_timeout, "serializer": OrjsonSerializer()}
    if api_key:
        kwargs["api_key"] = tuple(api_key.split(":", 1)) if ":" in api_key else api_key
    elif username:
        kwargs["basic_auth"] = (username, password)
    if any(h.startswith("https") for h in hosts):
        kwargs["verify_certs"] = verify_certs
        if ca_certs:
            kwargs["ca_certs"] = ca_certs
    return kwargs


def build_client(hosts: list[str], **settings: Any) -> Elasticsearch:
    """A new client (orjson serializer); ``api_key`` (encoded, or ``id:key``) wins over basic auth. Settings:
    ``api_key``, ``username``, ``password``, ``ca_certs``, ``verify_certs``, ``request_timeout``,
    ``max_retries``, ``retry_on_timeout``."""
    from elasticsearch import Elasticsearch

    return Elasticsearch(hosts, **_client_kwargs(hosts, **settings))


def build_async_client(hosts: list[str], **settings: Any) -> AsyncElasticsearch:
    """The same client for asyncio (the API's event loop), on the client's default async transport, aiohttp
    (``elasticsearch[async]``). Not httpx's: under load its per-call machinery cost the server more CPU per call
    than aiohttp or the blocking client in a thread (docs/API.md). Bound to the event loop it first runs on."""
    from elasticsearch import AsyncElasticsearch

    return AsyncElasticsearch(hosts, **_client_kwargs(hosts, **settings))


def async_transport_installed() -> bool:
    """Whether ``build_async_client`` can work here (aiohttp is importable)."""
    from importlib.util import find_spec

    return find_spec("aiohttp") is not None
