"""The registry in the lake's object store (``CRAWL_REGISTRY=s3://bucket/key``, against the local S3 server)
or in the instance's Postgres database (``CRAWL_REGISTRY=postgres``), beside the local file default: every
reader sees the current version at once, and an editor that saves over a version it never read is refused
(``RegistryConflict``) instead of silently wiping the other editor's change."""

from __future__ import annotations

import multiprocessing
import uuid

import pytest

from crawl_assets import settings
from crawl_assets.registry import RegistryConflict, RegistryFileError, SourceEntry, SourceStatus, load_registry, update_registry
from crawl_assets.registry.storage import TABLE, storage_of
from crawl_assets.registry.store import registry_view
from crawl_assets_tests.shared.s3_server import BUCKET

BACKENDS = ["file", "s3", "postgres"]


def entry(name: str) -> SourceEntry:
    return SourceEntry(name=name, tenant="acme", platform="hackernews", kind="search_query", identifier="feedback tool")


@pytest.fixture(params=BACKENDS)
def location(request, tmp_path, monkeypatch) -> str:
    """A fresh, empty registry location of each kind, set as CRAWL_REGISTRY."""
    if request.param == "file":
        where = str(tmp_path / "shared" / "sources.yaml")
    elif request.param == "s3":
        request.getfixturevalue("s3_env")
        where = f"s3://{BUCKET}/registry-{uuid.uuid4().hex[:10]}/sources.yaml"
    else:
        monkeypatch.setenv("DAGSTER_PG_URL", request.getfixturevalue("pg_url"))
        where = "postgres"
    monkeypatch.setenv("CRAWL_REGISTRY", where)
    return where


def test_the_setting_keeps_remote_locations_and_resolves_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert settings.registry_location("s3://b/k/sources.yaml") == "s3://b/k/sources.yaml"
    assert settings.registry_location("postgres") == "postgres"
    assert settings.registry_location("postgres:team-a") == "postgres:team-a"
    assert settings.registry_location("sources.yaml") == tmp_path / "sources.yaml"
    monkeypatch.setenv("CRAWL_REGISTRY", "s3://b/k/sources.yaml")
    assert settings.Settings.from_env().registry_path == "s3://b/k/sources.yaml"
    assert settings.retention_path() == settings.dagster_home() / "retention.yaml"  # not "next to" an object


def test_unknown_or_malformed_locations_are_refused_by_name(monkeypatch):
    for bad in ("gs://bucket/sources.yaml", "s3://", "s3://Bad_Bucket/x.yaml"):
        with pytest.raises(RegistryFileError, match="s3://|local file"):
            load_registry(bad)
    monkeypatch.delenv("DAGSTER_PG_URL", raising=False)
    with pytest.raises(RegistryFileError, match="DAGSTER_PG_URL"):
        load_registry("postgres")
    with pytest.raises(RegistryFileError, match="postgres:<name>"):
        load_registry("postgres:../../etc")

def test_edits_are_seen_by_every_reader_at_once(location):
    assert load_registry(location).entries == [] and registry_view(location)[0].entries == []
    update_registry(location, lambda reg: reg.add(entry("one")))
    reg, by_key = registry_view(location)
    assert list(by_key) == ["acme.hackernews.one"]
    again, _ = registry_view(location)
    assert again is reg  # unchanged: the parse is spared, the store was still asked
    update_registry(location, lambda reg: reg.set_status("one", SourceStatus.paused, "by the test"))
    paused, _ = registry_view(location)  # the very next read decides on the new version: no stale cache
    assert paused.entries[0].status.value == "paused"
    assert load_registry(location).get("one").status_reason == "by the test"


def test_an_editor_cannot_save_over_a_version_it_never_read(location):
    update_registry(location, lambda reg: reg.add(entry("base")))
    person, run = load_registry(location), load_registry(location)  # two editors read the same version
    person.add(entry("added-by-person"))
    person.save()
    run.set_status("base", SourceStatus.paused, "automatic pause")
    with pytest.raises(RegistryConflict, match="changed since it was read"):
        run.save()  # a naive store would write here and silently drop the person's new source
    assert sorted(e.name for e in load_registry(location).entries) == ["added-by-person", "base"]
    # the loser redoes its change on the current version: both edits survive
    update_registry(location, lambda reg: reg.set_status("base", SourceStatus.paused, "automatic pause"))
    final = load_registry(location)
    assert sorted(e.name for e in final.entries) == ["added-by-person", "base"]
    assert final.get("base").status.value == "paused"


def test_two_first_writers_do_not_overwrite_each_other(location):
    a, b = load_registry(location), load_registry(location)
    assert a.version == b.version == ""
    a.add(entry("a"))
    a.save()
    b.add(entry("b"))
    with pytest.raises(RegistryConflict):
        b.save()
    assert [e.name for e in load_registry(location).entries] == ["a"]


def _add_many(location: str, worker: int, count: int) -> None:
    for i in range(count):
        update_registry(location, lambda reg, i=i: reg.add(entry(f"w{worker}-{i}")))


@pytest.mark.parametrize("location", ["file", "postgres"], indirect=True)
def test_concurrent_editors_in_several_processes_lose_nothing(location):
    """Four processes (four machines for Postgres: nothing but the database is shared) add 5 sources each at
    once; every conflict is re-read and redone. (Not run on the local S3 server: moto checks If-Match and
    then stores without a lock between the two, which S3 itself does atomically; the deterministic
    conflict tests above cover S3.)"""
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_add_many, args=(location, w, 5)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    names = sorted(e.name for e in load_registry(location).entries)
    assert names == sorted(f"w{w}-{i}" for w in range(4) for i in range(5))


def test_a_remote_registry_is_bounded_and_checked_like_the_file(location):
    store = storage_of(location)
    store.write(b"a: &x [1]\nsources: *x\n", load_registry(location).version)
    with pytest.raises(RegistryFileError, match="anchors and aliases"):
        load_registry(location)
    with pytest.raises(RegistryFileError, match="anchors and aliases"):
        registry_view(location)


def test_the_postgres_registry_is_one_row_per_name(pg_url, monkeypatch):
    import sqlalchemy as sa

    monkeypatch.setenv("DAGSTER_PG_URL", pg_url)
    update_registry("postgres", lambda reg: reg.add(entry("main")))
    update_registry("postgres:team-b", lambda reg: reg.add(entry("other")))
    assert [e.name for e in load_registry("postgres").entries] == ["main"]
    assert [e.name for e in load_registry("postgres:team-b").entries] == ["other"]
    engine = sa.create_engine(pg_url)
    with engine.connect() as conn:
        rows = conn.execute(sa.text(f"SELECT name, version FROM {TABLE} ORDER BY name")).all()
    engine.dispose()
    assert [(r[0], r[1]) for r in rows] == [("sources", 1), ("team-b", 1)]


def test_an_alias_bomb_in_any_store_is_refused_by_every_reader(location, monkeypatch):
    """Issue 30, item 1: the bytes of an S3 object or a Postgres row go through the same loaders as a file's."""
    from ruamel.yaml.composer import Composer

    from crawl_assets.registry import store as registry_store
    from crawl_assets_tests.attacks.test_registry_attacks import named_alias_bomb

    monkeypatch.setattr(Composer, "return_alias", lambda self, node: pytest.fail("an alias was composed"))
    storage_of(location).write(named_alias_bomb("dotted").encode(), "")
    registry_store._cache.pop(location, None)
    for read in (load_registry, registry_view):
        with pytest.raises(RegistryFileError, match="anchors and aliases"):
            read(location)
