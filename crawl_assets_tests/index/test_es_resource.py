"""ElasticsearchResource: auth from EnvVar, orjson, and a working client inside Dagster."""

from __future__ import annotations

import base64

import dagster as dg
import pytest
from elasticsearch.serializer import OrjsonSerializer

from crawl_assets.orchestration.resources import ElasticsearchResource
from crawl_assets_tests.index.conftest import EsTarget


def test_api_key_wins_and_is_sent_as_a_header(monkeypatch: pytest.MonkeyPatch) -> None:
    client = ElasticsearchResource(hosts=["http://127.0.0.1:9"], api_key="id1:secret1", username="u",
                                   password="p").get_client()
    expected = base64.b64encode(b"id1:secret1").decode()
    assert client._headers["authorization"] == f"ApiKey {expected}"
    basic = ElasticsearchResource(hosts=["http://127.0.0.1:9"], username="u", password="p").get_client()
    assert basic._headers["authorization"] == "Basic " + base64.b64encode(b"u:p").decode()
    assert "authorization" not in ElasticsearchResource(hosts=["http://127.0.0.1:9"]).get_client()._headers
    assert isinstance(client.transport.serializers.get_serializer("application/json"), OrjsonSerializer)
    assert isinstance(client.transport.serializers.get_serializer("application/vnd.elasticsearch+json"),
                      OrjsonSerializer)


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRAWL_ES_URL", "http://a:9200, http://b:9200")
    monkeypatch.setenv("CRAWL_ES_USERNAME", "elastic")
    monkeypatch.setenv("CRAWL_ES_PASSWORD", "pw")
    res = ElasticsearchResource.from_env()
    assert res.hosts == ["http://a:9200", "http://b:9200"] and res.username == "elastic"
    assert ElasticsearchResource.from_env("http://c:9200").hosts == ["http://c:9200"]


def test_resource_in_dagster_with_envvar(es: EsTarget, monkeypatch: pytest.MonkeyPatch) -> None:
    """Basic auth filled from an EnvVar reaches the wire (the local node runs without security: it ignores it)."""
    monkeypatch.setenv("TEST_ES_USER", "someone")
    if es.cluster.env().keys() - {"CRAWL_ES_URL"}:
        pytest.skip("the test cluster has its own credentials; these would be refused")
    resource = ElasticsearchResource(hosts=[es.url], username=dg.EnvVar("TEST_ES_USER"), password="pw")
    with dg.build_resources({"es": resource}) as resources:
        client = resources.es.get_client()
        assert client.cluster.health()["status"] in ("green", "yellow")
        assert client._headers["authorization"] == "Basic " + base64.b64encode(b"someone:pw").decode()
