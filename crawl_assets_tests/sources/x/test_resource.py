"""XResource: credentials from environment variables by name, never their values in config or errors."""

from __future__ import annotations

import dagster as dg
import pytest

from crawl_assets.sources.x.resource import MissingCredential, XResource, token_var


def test_from_env_builds_a_named_pool_of_envvars(server):
    server.tokens |= {"default-secret", "team-secret"}
    env = {"CRAWL_X_BEARER_TOKEN": "default-secret", "CRAWL_X_RESEARCH_TEAM_BEARER_TOKEN": "team-secret",
           "CRAWL_X_EMPTY_BEARER_TOKEN": "", "CRAWL_X_BASE_URL": server.url}
    resource = XResource.from_env(env)
    assert resource.credential_names() == ["", "research_team"]
    assert isinstance(resource.bearer_token, dg.EnvVar) and resource.bearer_token == "CRAWL_X_BEARER_TOKEN"
    assert "secret" not in repr(resource)
    assert token_var("research_team") == "CRAWL_X_RESEARCH_TEAM_BEARER_TOKEN"


def test_named_credential_is_used_and_a_missing_one_is_named(server, monkeypatch):
    server.tokens = {"team-secret"}
    monkeypatch.setenv("CRAWL_X_TEAM_BEARER_TOKEN", "team-secret")
    resource = XResource.from_env({"CRAWL_X_TEAM_BEARER_TOKEN": "team-secret", "CRAWL_X_BASE_URL": server.url})
    try:
        user = resource.client("team").user_by_username("data_eng")
        assert user["username"] == "data_eng"
        assert resource.client("team") is resource.client("team"), "one pooled client per credential"
        with pytest.raises(MissingCredential, match="CRAWL_X_BEARER_TOKEN"):
            resource.client(None)
        with pytest.raises(MissingCredential, match="CRAWL_X_OTHER_BEARER_TOKEN") as caught:
            resource.client("other")
        assert "team-secret" not in str(caught.value)
    finally:
        resource.close()
