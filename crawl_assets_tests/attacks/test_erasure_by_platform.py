"""An erasure by author is about one person: an author id on one platform (and, for Discourse, one forum).
User 777 of X, of one forum and of another forum are three people (issue 30, item 4: ``--author 777`` meant
for the X user also erased Discourse user 777, irreversibly)."""

from __future__ import annotations

import gzip
from datetime import datetime, timezone

import orjson
import pytest
from click.testing import CliRunner

from crawl_assets import settings
from crawl_assets.cli.main import cli
from crawl_assets.normalize.build import wrap_line
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch

X_SOURCE, FORUM_A, FORUM_B = "acme.x.timeline", "acme.discourse.forum-a", "acme.discourse.forum-b"
AT = datetime(2026, 11, 1, tzinfo=timezone.utc)


def _x_page(post: int, user: str, handle: str, text: str) -> bytes:
    return orjson.dumps({"data": [{"id": str(post), "author_id": user, "text": text,
                                   "created_at": "2026-11-01T10:00:00.000Z"}],
                         "includes": {"users": [{"id": user, "username": handle, "name": handle.title()}]}})


def _forum_page(host: str, post: int, user: int, handle: str, text: str) -> bytes:
    body = {"latest_posts": [{"id": post, "user_id": user, "username": handle, "topic_id": 5, "post_number": post,
                              "created_at": "2026-11-01T10:00:00.000Z", "cooked": f"<p>{text}</p>"}]}
    return wrap_line(orjson.dumps(body), endpoint="posts", host=host, retrieved_at="2026-11-01T11:00:00+00:00")


def _store(lake: Lake, platform: str, source: str, fmt: str, lines: list[bytes]) -> None:
    batch = lake.write_raw_batch(tenant="acme", platform=platform, source=source, fmt=fmt, method="api",
                                 batch_id="20261101T000000000000Z-run1-0000", run_id="run1", lines=lines,
                                 collected_at=AT)
    normalize_batch(lake, batch, lake.table_part(TABLE, "acme", platform, source, batch.manifest.batch_id))


@pytest.fixture
def lake(dagster_home) -> Lake:
    """Three people with author id 777 (X "joe", forum A "mary", forum B "joe"), and one other of each source."""
    lake = Lake(settings.lake_root())
    _store(lake, "x", X_SOURCE, "x-v2", [_x_page(1001, "777", "joe", "x post of joe seven"),
                                         _x_page(1002, "888", "ann", "x post of ann")])
    _store(lake, "discourse", FORUM_A, "discourse", [_forum_page("a.example", 11, 777, "mary", "forum a post of mary"),
                                                     _forum_page("a.example", 12, 888, "bob", "forum a post of bob")])
    _store(lake, "discourse", FORUM_B, "discourse", [_forum_page("b.example", 21, 777, "joe", "forum b post of joe"),
                                                     _forum_page("b.example", 22, 888, "cy", "forum b post of cy")])
    return lake


def _texts(lake: Lake) -> set[str]:
    return {r["text"] for p, s in lake.tenant_sources("acme") for _, t in lake.read_parts(TABLE, "acme", p, s)
            for r in arrow_to_records(t)}


def _raw(lake: Lake, source: str) -> bytes:
    return b"".join(gzip.decompress(lake.fs.cat_file(p)) for p in lake.fs.glob(lake.path(f"raw/acme/*/{source}/*.gz")))


ALL = {"x post of joe seven", "x post of ann", "forum a post of mary", "forum a post of bob", "forum b post of joe",
       "forum b post of cy"}


def _erase(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, ["erase", "--tenant", "acme", *args], input=input)


def test_a_bare_id_held_on_several_platforms_stops_lists_them_and_erases_nothing(lake):
    assert _texts(lake) == ALL
    result = _erase("--author", "777")
    assert result.exit_code == 2, result.output
    for person in ("x:777", "discourse:a.example:777", "discourse:b.example:777"):
        assert person in result.output, f"{person} is not listed"
    assert _texts(lake) == ALL and not lake.read_erasure_log("acme"), "nothing is erased or logged"


def test_a_platform_qualified_id_erases_that_person_only(lake):
    result = _erase("--author", "x:777")
    assert result.exit_code == 0, result.output
    assert _texts(lake) == ALL - {"x post of joe seven"}, "Discourse users 777 are other people"
    assert b'"user_id":777' in _raw(lake, FORUM_A) and b'"user_id":777' in _raw(lake, FORUM_B)

    result = _erase("--author", "discourse:a.example:777")
    assert result.exit_code == 0, result.output
    assert _texts(lake) == ALL - {"x post of joe seven", "forum a post of mary"}, "user 777 of forum B is another"
    assert b'"user_id":777' not in _raw(lake, FORUM_A) and b'"user_id":777' in _raw(lake, FORUM_B)


def test_a_discourse_id_without_its_forum_or_an_unknown_id_is_refused(lake):
    for author in ("discourse:777", "999"):
        result = _erase("--author", author)
        assert result.exit_code == 2, result.output
    assert _texts(lake) == ALL


def test_an_author_name_selects_people_by_platform_and_forum(lake):
    """"joe" is X user 777 and forum B's user 777; forum A's user 777 is "mary" and must stay."""
    listed = _erase("--author-name", "joe", input="n\n")
    assert listed.exit_code != 0 and "x:777" in listed.output and "discourse:b.example:777" in listed.output
    assert "discourse:a.example:777" not in listed.output
    result = _erase("--author-name", "joe", "--yes")
    assert result.exit_code == 0, result.output
    assert _texts(lake) == ALL - {"x post of joe seven", "forum b post of joe"}


def test_the_index_step_erases_the_platforms_person_only(lake, es_cluster):
    """Also when the lake step ran before (the index step then finds the person in the index itself)."""
    from crawl_assets.index.sink import index_documents

    client = es_cluster.client
    docs = [d for p, s in lake.tenant_sources("acme") for _, t in lake.read_parts(TABLE, "acme", p, s)
            for d in arrow_to_records(t)]
    index_documents(client, docs, family="records", tenant="acme", deadletter_root=settings.lake_root())
    client.indices.refresh(index="crawl-records-acme")
    assert _erase("--author", "x:777").exit_code == 0  # lake only: no cluster configured
    result = _erase("--author", "x:777", "--es-url", es_cluster.url)
    assert result.exit_code == 0, result.output
    client.indices.refresh(index="crawl-records-acme")
    left = {h["_source"]["text"] for h in client.search(index="crawl-records-acme", size=100)["hits"]["hits"]}
    assert left == ALL - {"x post of joe seven"}
    # a bare id resolved through the index too: X's 777 is gone everywhere, the forums' two remain
    assert _erase("--author", "777", "--es-url", es_cluster.url).exit_code == 2
