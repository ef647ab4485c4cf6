"""A source paused automatically quotes the server's refusal: a token the server echoes in its error body
reaches neither the registry nor the instance (run log, the Failure, its metadata, the partition's
observation)."""

from __future__ import annotations

from dataclasses import dataclass

import dagster as dg

from crawl_assets.registry import load_registry
from crawl_assets.orchestration.assets import raw_asset
from crawl_assets.core import catalog
from crawl_assets.sdk.rest_resource import source_resource
from crawl_assets_tests.secrets.storage import sqlite_hits
from crawl_assets_tests.sources.feedback_helpers import run_raw_asset
from crawl_assets_tests.standins.discourse_api import DiscourseServer
from crawl_assets_tests.standins.http_base import Refuse

TOKEN = "glpat-Zq8vR2kLm4Np7Xw1Ty6U"  # a made-up GitLab-shaped token, pasted where the forum key belongs
REGISTRY = """sources:
  - {name: community, tenant: acme, platform: discourse, kind: forum, identifier: "https://forum.example.org",
     credential: bot, options: {api_username: crawler}}
"""


@dataclass
class EchoingForum(DiscourseServer):
    """A forum that quotes the key it refuses in its error body (some servers do)."""

    def route(self, req):
        raise Refuse(403, {"errors": [f"Api-Key {req.headers.get('api-key')} is not permitted to view this"],
                           "error_type": "invalid_access"})


def test_a_token_echoed_by_the_server_is_redacted_everywhere_the_pause_goes(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    with EchoingForum() as srv:
        monkeypatch.setenv("CRAWL_DISCOURSE_BASE_URL", srv.url)
        monkeypatch.setenv("CRAWL_DISCOURSE_API_KEY__ACME__BOT", TOKEN)
        with dg.instance_for_test(temp_dir=str(home)) as instance:
            result = run_raw_asset(raw_asset("discourse"), tmp_path=tmp_path, registry_yaml=REGISTRY,
                                   partition="acme.discourse.community", raise_on_error=False,
                                   resources={"discourse": source_resource(catalog.spec("discourse"))}, instance=instance)
            assert not result.success
            logs = "\n".join(e.message or "" for e in instance.all_logs(result.run_id))
    entry = load_registry(tmp_path / "sources.yaml").by_key()["acme.discourse.community"]
    assert entry.paused and "[redacted]" in (entry.status_reason or "")
    assert "paused" in logs and "[redacted]" in logs, "the search looks at the pause's own log lines"
    found, searched = sqlite_hits(home, TOKEN)
    assert "event_logs" in searched and found == [], f"the token is stored in the instance: {found}"
    assert TOKEN not in logs
