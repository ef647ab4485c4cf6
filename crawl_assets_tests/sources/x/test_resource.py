"""XResource: credentials per tenant from environment variables, never their values in config or errors."""

from __future__ import annotations

import dagster as dg
import pytest

from crawl_assets.sources.x.resource import MissingCredential, XResource, token_var


def test_from_env_builds_a_per_tenant_pool_of_envvars(server):
    env = {"CRAWL_X_BEARER_TOKEN": "default-secret", "CRAWL_X_BEARER_TOKEN__ACME__RESEARCH_TEAM": "team-secret",
           "CRAWL_X_BEARER_TOKEN__ACME__EMPTY": "", "CRAWL_X_BASE_URL": server.url}
    resource = XResource.from_env(env)
    assert sorted((s.tenant, s.name) for s in resource.secrets) == [("acme", "research_team"), ("default", "")]
    assert all(isinstance(s.value, dg.EnvVar) for s in resource.secrets)
    assert "default-secret" not in repr(resource) and "team-secret" not in repr(resource)
    assert token_var("acme", "research_team") == "CRAWL_X_BEARER_TOKEN__ACME__RESEARCH_TEAM"
    assert token_var("default", None) == "CRAWL_X_BEARER_TOKEN"


def test_a_tenants_credential_is_used_and_a_missing_one_is_named(server, monkeypatch):
    server.tokens = {"team-secret"}
    env = {"CRAWL_X_BEARER_TOKEN__ACME__TEAM": "team-secret", "CRAWL_X_BASE_URL": server.url}
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    resource = XResource.from_env(env)
    try:
        user = resource.client("acme", "team").user_by_username("data_eng")
        assert user["username"] == "data_eng"
        assert resource.client("acme", "team") is resource.client("acme", "team"), "one pooled client per credential"
        with pytest.raises(MissingCredential, match="CRAWL_X_BEARER_TOKEN__ACME"):
            resource.client("acme", None)
        with pytest.raises(MissingCredential, match="CRAWL_X_BEARER_TOKEN__ACME__OTHER") as caught:
            resource.client("acme", "other")
        assert "team-secret" not in str(caught.value)
    finally:
        resource.close()
