"""POST /v1/releases on the API world: the archive is the CLI's release of the same query (apart from the
creation time), other tenants' sources are missing ones, and the bounds hold (records, body, one build a key)."""

from __future__ import annotations

import io
import tarfile
from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest

from crawl_assets.api.access import KeyStore
from crawl_assets.query.filters import RecordFilter
from crawl_assets.lake import Lake
from crawl_assets.release import ReleaseQuery, create_release, verify_package
from crawl_assets_tests.api.conftest import World, auth, make_client

QUERY = {"sources": ["gen-a"], "platforms": ["x"], "since": "2000-01-01T00:00:00Z"}


@pytest.fixture
def temp(tmp_path: Path) -> Path:
    folder = tmp_path / "builds"
    folder.mkdir()
    return folder


def _unpack(data: bytes, into: Path) -> Path:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == sorted(m.name for m in members)
        assert {m.mtime for m in members} == {0} and {m.uid for m in members} == {0}
        tar.extractall(into, filter="data")
    (folder,) = into.iterdir()
    return folder


def test_a_release_through_the_api_is_the_clis_release_of_the_same_query(world: World, temp, tmp_path, monkeypatch):
    with make_client(world, release_tmp=str(temp)) as api:
        resp = api.post("/v1/releases", content=orjson.dumps(QUERY), headers=auth(world))
    assert resp.status_code == 200, resp.text[:500]
    assert resp.headers["content-type"] == "application/x-tar"
    got = _unpack(resp.content, tmp_path / "got")
    release_id, problems = verify_package(got)
    assert problems == [] and release_id == got.name == resp.headers["x-release-id"]
    assert not list(temp.iterdir()), "the build's temporary folder was left behind"

    monkeypatch.setenv("CRAWL_RELEASE_ROOT", str(tmp_path / "releases"))
    flt = RecordFilter(platforms=("x",), sources=("gen-a",), start=datetime(2000, 1, 1, tzinfo=timezone.utc))
    cli = create_release(Lake(str(world.home.parent / "lake")), ReleaseQuery("demo", flt), "cli")
    assert cli.release_id == release_id and cli.records == int(resp.headers["x-release-records"]) > 0
    names = sorted(p.name for p in cli.path.iterdir())
    assert names == sorted(p.name for p in got.iterdir())
    for name in names:
        if name in ("datasheet.json", "manifest.json"):
            continue
        assert (got / name).read_bytes() == (cli.path / name).read_bytes(), name
    sheets = [orjson.loads((folder / "datasheet.json").read_bytes()) for folder in (got, cli.path)]
    assert [s.pop("created_at") for s in sheets] and sheets[0] == sheets[1]


def test_the_same_query_gives_the_same_archive_apart_from_the_creation_time(world: World, api):
    archives = []
    for _ in range(2):
        resp = api.post("/v1/releases", content=orjson.dumps(QUERY), headers=auth(world))
        assert resp.status_code == 200, resp.text[:300]
        with tarfile.open(fileobj=io.BytesIO(resp.content)) as tar:
            archives.append({m.name: (m.get_info(), tar.extractfile(m).read() if m.isfile() else b"")
                             for m in tar.getmembers() if not m.name.endswith(("/datasheet.json", "/manifest.json"))})
    assert list(archives[0]) == list(archives[1]) and archives[0] == archives[1]


def test_pseudonyms_use_the_servers_key_and_never_send_it(world: World, api, tmp_path, monkeypatch):
    monkeypatch.delenv("CRAWL_RELEASE_KEY_FILE", raising=False)
    body = orjson.dumps(QUERY | {"pseudonymize": True, "platforms": ["telegram"], "sources": []})
    refused = api.post("/v1/releases", content=body, headers=auth(world))
    assert refused.status_code == 400 and "no release key" in refused.json()["message"]
    key = tmp_path / "release.key"
    key.write_text("ab" * 32)
    key.chmod(0o600)
    monkeypatch.setenv("CRAWL_RELEASE_KEY_FILE", str(key))
    resp = api.post("/v1/releases", content=body, headers=auth(world))
    assert resp.status_code == 200, resp.text[:300]
    folder = _unpack(resp.content, tmp_path / "got")
    rows = [orjson.loads(line) for line in (folder / "records.jsonl").read_bytes().splitlines()]
    assert any(r["author_id"] for r in rows)
    assert all(r["author_id"] is None or r["author_id"].startswith("anon-") for r in rows)
    assert all(r["author_handle"] is None for r in rows)
    assert b"ab" * 32 not in resp.content


def test_another_tenants_source_is_refused_exactly_like_a_missing_one(world: World, api):
    answers = {}
    for value in ("gen-r", "no-such", "rival.x.gen-r", "demo.x.no-such"):
        resp = api.post("/v1/releases", content=orjson.dumps({"sources": [value]}), headers=auth(world))
        answers[value] = (resp.status_code, resp.json()["error"], resp.json()["message"].replace(repr(value), "S"))
    assert answers["gen-r"] == answers["no-such"] == answers["rival.x.gen-r"] == answers["demo.x.no-such"]
    assert answers["gen-r"] == (404, "not_found", "no source S")
    own = api.post("/v1/releases", content=orjson.dumps({"sources": ["gen-r"]}), headers=auth(world, "rival"))
    assert own.status_code == 200, own.text[:300]


def test_a_release_over_the_record_limit_is_refused_and_leaves_nothing(world: World, temp):
    with make_client(world, release_max_records=3, release_tmp=str(temp)) as api:
        resp = api.post("/v1/releases", content=orjson.dumps(QUERY), headers=auth(world))
        empty = {"sources": ["gen-a"], "until": "2000-01-01T00:00:00Z"}
        again = api.post("/v1/releases", content=orjson.dumps(empty), headers=auth(world))
    assert resp.status_code == 413 and resp.json()["error"] == "release_too_large"
    assert "more than 3 records" in resp.json()["message"]
    assert again.status_code == 200 and again.headers["x-release-records"] == "0", "the refused build kept the slot"
    assert not list(temp.iterdir())


def test_a_second_build_of_the_same_key_is_told_to_wait(world: World, temp):
    key_id = KeyStore(world.keys_url).verify(world.keys["demo"]).key_id
    with make_client(world, release_tmp=str(temp)) as api:
        slots = api.app.state.api.releases
        assert slots.acquire(key_id)  # a build of this key in flight
        try:
            busy = api.post("/v1/releases", content=orjson.dumps(QUERY), headers=auth(world))
            other = api.post("/v1/releases", content=orjson.dumps({"sources": ["gen-r"]}), headers=auth(world, "rival"))
        finally:
            slots.release(key_id)
        again = api.post("/v1/releases", content=orjson.dumps(QUERY), headers=auth(world))
    assert busy.status_code == 429 and busy.json()["error"] == "release_in_progress" and busy.headers["retry-after"]
    assert other.status_code == 200 and again.status_code == 200
    assert not list(temp.iterdir())


@pytest.mark.parametrize("body, status, words", [
    (b'{"sources": ["' + b"a" * 20_000 + b'"]}', 413, "over 16384 bytes"),
    (b'{"tenant": "rival"}', 400, "tenant: Extra inputs are not permitted"),
    (b'{"since": "2024-01-01"}', 400, "since:"),
    (b'{"since": "2024-02-01T00:00:00Z", "until": "2024-01-01T00:00:00Z"}', 400, "since: must be before until"),
    (b"[", 400, "body"),
    (b"", 400, "body: a JSON object of release options is required"),
])
def test_a_bad_body_is_refused_naming_the_problem(world: World, api, body, status, words):
    resp = api.post("/v1/releases", content=body, headers=auth(world))
    assert resp.status_code == status and words in resp.json()["message"], resp.text[:300]


def test_an_api_release_is_noted_so_an_erasure_names_it_and_the_key_it_went_to(world: World, api, tmp_path):
    from crawl_assets.erasure.log import erasure_key
    from crawl_assets.erasure.releases import releases_holding

    resp = api.post("/v1/releases", content=orjson.dumps(QUERY), headers=auth(world))
    assert resp.status_code == 200, resp.text[:300]
    got = _unpack(resp.content, tmp_path / "got")
    lake = Lake(str(world.home.parent / "lake"))
    key_id = world.keys["demo"].split("_")[1]
    listed = releases_holding(lake, "demo", "demo.x.gen-a", erasure_key(lake))  # a source it holds
    assert {(e["release_id"], e["path"]) for e in listed} >= {(got.name, f"api key {key_id}")}
