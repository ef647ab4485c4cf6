"""Google Play: the JWT bearer token flow against the stand-in's token endpoint, reviews.list paging,
developer replies as relations, the one-week window (cadence refused when too slow, gap reported when
a sync came too late), token refresh, and permission errors."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import orjson
import pytest

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sources.play.normalize import normalize_reviews
from crawl_assets.sources.play.resource import PlayResource
from crawl_assets.sources.play.sync import CadenceError, sync_app
from crawl_assets.sdk.sync import Budget
from crawl_assets.sdk.errors import PermanentError
from crawl_assets.sdk.tenant_secrets import MissingCredential, TenantSecret
from crawl_assets_tests.sources.feedback_helpers import LakeStore, errors, normalize_batches
from crawl_assets_tests.standins.play_api import PlayServer, make_review

NOW = datetime.now(timezone.utc)
PACKAGE = "com.acme.app"


def reviews(n: int = 45) -> list[dict]:
    return [make_review(f"gp:AOqp{i:04d}", NOW - timedelta(hours=5 * i), rating=1 + i % 5,
                        reply="ممنون از بازخورد شما" if i % 4 == 0 else ("Thanks, fixed in 2.4" if i % 3 == 0 else None),
                        lang="fa_IR" if i % 4 == 0 else "en",
                        text="\tبرنامه خیلی کند است" if i % 4 == 0 else "Crash\tCrashes on start") for i in range(n)]


@pytest.fixture
def server():
    with PlayServer(apps={PACKAGE: reviews(), "com.other.app": []}, grants={"sa@acme.iam": {PACKAGE}}) as srv:
        yield srv


def entry(**policy) -> SourceEntry:
    return SourceEntry(name="app", tenant="acme", platform="play", kind="app", identifier=PACKAGE, credential="main",
                       policy={"interval_minutes": 360, **policy}, options={"max_results": 10})


def resource(server: PlayServer, email: str = "sa@acme.iam", key_index: int = 0, tenant: str = "acme") -> PlayResource:
    key = server.register(email, key_index)
    return PlayResource(base_url=server.url, backoff_seconds=0.01,
                        secrets=[TenantSecret(tenant=tenant, name="main", value=orjson.dumps(key).decode())])


@pytest.fixture
def store(tmp_path):
    return LakeStore(Lake(str(tmp_path / "lake")), entry(), "play")


def test_service_account_token_then_every_page_of_the_window(server, store):
    client = resource(server).client(store.entry)
    result = sync_app(client, store.entry, {}, store, Budget())
    client.http.close()
    visible = [r for r in reviews() if NOW - timedelta(days=7) <= datetime.fromtimestamp(
        int(r["comments"][0]["userComment"]["lastModified"]["seconds"]), timezone.utc)]
    assert result.stats.complete and result.stats.fetched == len(visible) == 34
    assert server.counts() == {"token": 1, "reviews.list": 4}
    claims = server.assertions[0]
    assert claims["iss"] == "sa@acme.iam" and claims["scope"].endswith("/auth/androidpublisher")
    assert claims["exp"] - claims["iat"] == 3600
    assert result.stats.extra["gap_detected"] is False and "history_starts" in result.stats.extra
    records, rejections = normalize_batches(store.lake, store.entry, normalize_reviews)
    assert not rejections
    by_kind = {k: [r for r in records if r.kind == k] for k in ("review", "reply")}
    assert len(by_kind["review"]) == 34 and len(by_kind["reply"]) == result.stats.extra["developer_replies"] == 18
    review_keys = {r.key for r in by_kind["review"]}
    assert all(r.reply_to in review_keys and r.author_id == f"developer:{PACKAGE}" for r in by_kind["reply"])
    first = by_kind["review"][0]
    assert first.key == f"play:{PACKAGE}:gp:AOqp0000" and first.lang == "fa"
    assert {"rating", "app_version_name", "device", "reviewer_language", "android_os_version"} <= set(first.metadata)
    assert by_kind["review"][1].metadata["title"] == "Crash" and by_kind["review"][1].text == "Crashes on start"


def test_an_expired_token_is_refreshed_once(server, store):
    res = resource(server)
    client = res.client(store.entry)
    sync_app(client, store.entry, {}, store, Budget(max_requests=2))
    server.expire_tokens()
    result = sync_app(client, store.entry, store.state, store, Budget())
    client.http.close()
    assert result.stats.complete and server.counts()["token"] == 2


def test_a_foreign_key_is_refused_by_the_token_endpoint(server, store):
    good = server.register("sa@acme.iam", 0)
    forged = dict(good, private_key=server.register("x@evil.iam", 1)["private_key"])
    res = PlayResource(base_url=server.url, secrets=[TenantSecret(tenant="acme", name="main", value=orjson.dumps(forged).decode())])
    client = res.client(store.entry)
    with pytest.raises(PermanentError, match="invalid_grant|Invalid JWT Signature"):
        sync_app(client, store.entry, {}, store, Budget())
    client.http.close()


def test_app_without_grant_or_unknown_is_permanent(server, tmp_path):
    res = resource(server)
    for package, status in (("com.other.app", "403"), ("com.nope.app", "404")):
        e = SourceEntry(name="x", tenant="acme", platform="play", kind="app", identifier=package, credential="main",
                        policy={"interval_minutes": 360})
        client = res.client(e)
        with pytest.raises(PermanentError, match=status):
            sync_app(client, e, {}, LakeStore(Lake(str(tmp_path / package)), e, "play"), Budget())
        client.http.close()


def test_a_cadence_slower_than_half_the_window_is_refused_before_any_request(server, store):
    slow = entry(interval_minutes=6 * 24 * 60)
    client = resource(server).client(slow)
    with pytest.raises(CadenceError, match="at most 5040"):
        sync_app(client, slow, {}, store, Budget())
    client.http.close()
    assert server.log == []


def test_a_sync_that_came_too_late_reports_the_gap(server, store):
    client = resource(server).client(store.entry)
    late = {"last_complete_at": (NOW - timedelta(days=9)).isoformat()}
    # The sync's clock is the test's NOW: measured against wall time, a slow session shifts the gap.
    result = sync_app(client, store.entry, late, store, Budget(), clock=NOW.timestamp)
    client.http.close()
    extra = result.stats.extra
    assert extra["gap_detected"] is True and 2 * 86400 - 60 < extra["gap_seconds"] < 2 * 86400 + 60
    assert extra["gap_from"] == late["last_complete_at"]
    assert result.stats.warnings and "may be missing" in result.stats.warnings[0]
    [first, *_] = store.lake.raw_batches("acme", "play", store.entry.key)  # the gap is in the lake too
    assert {k: v for k, v in first.manifest.extra.items() if "gap" in k} == {
        k: v for k, v in extra.items() if "gap" in k}
    client = resource(server).client(store.entry)
    on_time = sync_app(client, store.entry, result.state, store, Budget(), clock=NOW.timestamp)
    client.http.close()
    assert on_time.stats.extra["gap_detected"] is False


def test_credentials_are_per_tenant(server):
    res = resource(server, tenant="acme")
    other = SourceEntry(name="app", tenant="globex", platform="play", kind="app", identifier=PACKAGE, credential="main",
                        policy={"interval_minutes": 360})
    with pytest.raises(MissingCredential, match="CRAWL_PLAY_SERVICE_ACCOUNT_JSON__GLOBEX__MAIN"):
        res.client(other)
