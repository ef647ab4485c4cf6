"""Cursors on the real node (issue 30, items 9 and 16): every cursor expires, the first page's too; replaying a
cursor opens no new point in time; a key's open points in time are bounded; a cursor reveals nothing (no
index name, node id, tenant or sort value)."""

from __future__ import annotations

import base64
import binascii
import re
import time

from crawl_assets_tests.api.conftest import auth, make_client, open_contexts

# docs/API.md: "a cursor is valid 2 minutes after the page that gave it"; "at most 8 open snapshots per key"
LIFETIME = 120
SNAPSHOTS_PER_KEY = 8


def _shards(world) -> int:  # noqa: ANN001
    """Search contexts one point in time over tenant demo's records holds (one per shard)."""
    return len(world.es.search_shards(index="crawl-records-demo")["shards"])


def test_replaying_a_cursor_opens_no_new_snapshot(world, demo) -> None:
    before = open_contexts(world.es)
    first = demo("/v1/search", q="خبر", size=2)
    second = demo("/v1/search", q="خبر", size=2, cursor=first["next"])
    for _ in range(30):  # the first page's cursor, replayed: each replay used to open a point in time
        again = demo("/v1/search", q="خبر", size=2, cursor=first["next"])
        assert again["records"] == second["records"], "a replay reads the same snapshot"
        demo("/v1/search", q="خبر", size=2, cursor=second["next"])
    assert open_contexts(world.es) - before <= _shards(world), "one chain of pages holds one point in time"


def test_a_keys_open_snapshots_are_bounded_and_the_least_recently_used_is_closed(world) -> None:
    with make_client(world) as client:
        before = open_contexts(world.es)
        seconds = []
        for size in range(2, 4 + SNAPSHOTS_PER_KEY):  # more chains of pages than a key may hold snapshots
            first = client.get("/v1/search", params={"q": "خبر", "size": size}, headers=auth(world)).json()
            page = client.get("/v1/search", params={"q": "خبر", "size": size, "cursor": first["next"]},
                              headers=auth(world))
            assert page.status_code == 200, page.text
            seconds.append((size, page.json()["next"]))
        held = open_contexts(world.es) - before
        assert held <= SNAPSHOTS_PER_KEY * _shards(world), f"{held} search contexts open for one key"
        size, oldest = seconds[0]
        closed = client.get("/v1/search", params={"q": "خبر", "size": size, "cursor": oldest}, headers=auth(world))
        assert closed.status_code == 410 and closed.json()["error"] == "cursor_expired", closed.text
        size, newest = seconds[-1]
        assert client.get("/v1/search", params={"q": "خبر", "size": size, "cursor": newest},
                          headers=auth(world)).status_code == 200


def test_every_cursor_expires_with_a_clear_answer(world) -> None:
    with make_client(world) as client:
        state = client.app.state.api
        now = [time.time()]
        state.clock = lambda: now[0]
        params = {"q": "خبر", "size": 2}
        first = client.get("/v1/search", params=params, headers=auth(world)).json()["next"]
        second = client.get("/v1/search", params={**params, "cursor": first}, headers=auth(world)).json()["next"]
        now[0] += LIFETIME - 5
        assert client.get("/v1/search", params={**params, "cursor": first}, headers=auth(world)).status_code == 200
        now[0] += 10
        for cursor in (first, second):
            resp = client.get("/v1/search", params={**params, "cursor": cursor}, headers=auth(world))
            assert resp.status_code == 410 and resp.json()["error"] == "cursor_expired", resp.text
            assert "expired" in resp.json()["message"] and "first page" in resp.json()["message"]


def _readable(text: str, depth: int = 3) -> bytes:
    """Everything a caller could read out of ``text``: itself, and each base64 run in it decoded, recursively."""
    out = text.encode()
    if depth == 0:
        return out
    for run in re.findall(r"[A-Za-z0-9_\-+/]{16,}={0,2}", text):
        for decode in (base64.urlsafe_b64decode, base64.b64decode):
            try:
                raw = decode(run + "=" * (-len(run) % 4))
            except (binascii.Error, ValueError):
                continue
            out += b"\n" + raw + b"\n" + _readable(raw.decode("latin-1"), depth - 1)
    return out


def test_a_cursor_reveals_no_index_node_tenant_or_sort_value(world, demo) -> None:
    first = demo("/v1/search", q="خبر", size=2)
    second = demo("/v1/search", q="خبر", size=2, cursor=first["next"])
    nodes = list(world.es.nodes.info()["nodes"])
    for page, cursor in ((first, first["next"]), (second, second["next"])):
        seen = _readable(cursor)
        last = page["records"][-1]
        for secret in ["crawl-records", "demo", last["key"], *nodes]:
            assert secret.encode() not in seen, f"{secret!r} readable in a cursor"
        assert b'"p"' not in seen and b'"a"' not in seen, "no structure is readable"
