"""A source resource's non-secret settings come from ``settings.source_tunables``: only what is set, so the
resource's field defaults stay the one place defaults live; secrets stay ``EnvVar`` references."""

from __future__ import annotations

import dagster as dg
import pytest

from crawl_assets import settings
from crawl_assets.sources.intercom.resource import IntercomResource
from crawl_assets.sources.play.resource import PlayResource
from crawl_assets.sources.x.client import DEFAULT_BASE_URL as X_DEFAULT_BASE_URL
from crawl_assets.sources.x.resource import MissingCredential, XResource


def test_only_the_set_variables_become_fields():
    env = {"CRAWL_PLAY_BASE_URL": "http://127.0.0.1:9/", "CRAWL_PLAY_TOKEN_URI": ""}
    assert settings.source_tunables("CRAWL_PLAY", ("base_url", "token_uri"), env) == {"base_url": "http://127.0.0.1:9/"}
    assert settings.source_tunables("CRAWL_PLAY", ("base_url",), {}) == {}
    with pytest.raises(ValueError, match="page_size"):
        settings.source_tunables("CRAWL_PLAY", ("base_url", "page_size"), env)


def test_play_reads_its_host_and_token_endpoint_and_keeps_defaults_otherwise():
    key = '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----canary-7f3a"}'
    env = {"CRAWL_PLAY_BASE_URL": "http://127.0.0.1:9/api", "CRAWL_PLAY_TOKEN_URI": "http://127.0.0.1:9/token",
           "CRAWL_PLAY_SERVICE_ACCOUNT_JSON__ACME": key}
    res = PlayResource.from_env(env)
    assert (res.base_url, res.token_uri, res.root_url()) == (env["CRAWL_PLAY_BASE_URL"], env["CRAWL_PLAY_TOKEN_URI"],
                                                             env["CRAWL_PLAY_BASE_URL"])
    assert [(s.tenant, s.value) for s in res.secrets] == [("acme", dg.EnvVar("CRAWL_PLAY_SERVICE_ACCOUNT_JSON__ACME"))]
    assert "canary-7f3a" not in repr(res)
    bare = PlayResource.from_env({})
    assert (bare.base_url, bare.token_uri, bare.secrets) == ("", "", [])
    assert bare.root_url() == PlayResource.DEFAULT_BASE_URL


def test_a_variable_for_a_field_a_resource_lacks_is_not_read():
    # CRAWL_INTERCOM_TOKEN_URI names no IntercomResource field: it is neither read nor refused
    res = IntercomResource.from_env({"CRAWL_INTERCOM_TOKEN_URI": "http://x", "CRAWL_INTERCOM_BASE_URL": "http://h"})
    assert res.base_url == "http://h" and "token_uri" not in type(res).model_fields


def test_x_keeps_its_default_host_unless_one_is_set():
    assert XResource.from_env({}).base_url == X_DEFAULT_BASE_URL
    assert XResource.from_env({"CRAWL_X_BASE_URL": ""}).base_url == X_DEFAULT_BASE_URL
    assert XResource.from_env({"CRAWL_X_BASE_URL": "http://127.0.0.1:9"}).base_url == "http://127.0.0.1:9"


def test_x_names_a_legacy_token_variable_that_is_no_longer_read(monkeypatch):
    monkeypatch.setenv("CRAWL_X_RESEARCH_BEARER_TOKEN", "old-secret")
    resource = XResource.from_env({"CRAWL_X_BEARER_TOKEN__ACME": "tok"})
    with pytest.raises(MissingCredential) as caught:
        resource.client("acme", "research")
    message = str(caught.value)
    assert "CRAWL_X_BEARER_TOKEN__ACME__RESEARCH" in message and "CRAWL_X_RESEARCH_BEARER_TOKEN" in message
    assert "old-secret" not in message
    monkeypatch.delenv("CRAWL_X_RESEARCH_BEARER_TOKEN")
    with pytest.raises(MissingCredential) as caught:
        resource.client("acme", "research")
    assert "CRAWL_X_RESEARCH_BEARER_TOKEN" not in str(caught.value)
