"""The lake spells its areas' paths in one place (``crawl_assets.lake.layout``): each function gives exactly the
path the modules that moved to it used to spell themselves, so no existing lake loses a file."""

from __future__ import annotations

import pytest

from crawl_assets.lake import Lake
from crawl_assets.lake.layout import index_marker, media_file, state_file


def test_area_paths_are_the_ones_lakes_already_hold():
    assert index_marker("acme", "x", "acme.x.news", "B1") == "index_state/acme/x/acme.x.news/B1.done"
    assert state_file("acme", "x", "acme.x.news", "threads.json.gz") == "state/acme/x/acme.x.news/threads.json.gz"
    assert state_file("t", "telegram", "t.telegram.c", "refresh-window.json") == \
        "state/t/telegram/t.telegram.c/refresh-window.json"
    assert media_file("t", "telegram", "t.telegram.c", "-100/7.jpg") == "media/t/telegram/t.telegram.c/-100/7.jpg"


def test_read_bytes_of_a_missing_file_is_none(tmp_path):
    lake = Lake(str(tmp_path))
    assert lake.read_bytes("state/a/b/c/none.json") is None
    lake.write_bytes("state/a/b/c/doc.json", b"0123456789")
    assert lake.read_bytes("state/a/b/c/doc.json") == b"0123456789"
    assert lake.read_bytes("state/a/b/c/doc.json", 4) == b"0123"


def test_every_area_path_is_the_one_the_modules_that_moved_here_spelled():
    """Old literal (as the erasure, retention, dead-letter and landing modules spelled it) == layout's function."""
    from crawl_assets.lake import layout
    from crawl_assets.lake.landing import landing_deliveries, landing_events

    t, p, s, b = "acme", "x", "acme.x.news", "20260101T000000000000Z-run-0001"
    assert layout.raw_file(t, p, s, b) == f"raw/{t}/{p}/{s}/{b}.jsonl.gz"
    assert layout.raw_manifest(t, p, s, b) == f"raw/{t}/{p}/{s}/{b}.meta.json"
    assert layout.quarantine_file(t, p, s, b) == f"quarantine/{t}/{p}/{s}/{b}.jsonl"
    assert layout.quarantine_file(t, "*", "*", "*") == f"quarantine/{t}/*/*/*.jsonl"
    assert layout.table_dir("normalized_records", t, p, s) == f"tables/normalized_records/{t}/{p}/{s}"
    assert layout.erasure_log(t) == f"erasure/{t}/log.jsonl"
    assert layout.DEADLETTER_PENDING == "deadletter/es" and layout.DEADLETTER_REPLAYED == "deadletter/es-replayed"
    assert layout.deadletter_dir(layout.DEADLETTER_PENDING, "records", t) == f"deadletter/es/records/{t}"
    assert layout.deadletter_dir("*", "*", t) == f"deadletter/*/*/{t}"
    assert layout.source_folders(t, p, s) == [f"{area}/{t}/{p}/{s}" for area in (
        "raw", "landing", "quarantine", "index_state", "state", "media")] + [f"tables/*/{t}/{p}/{s}"]
    assert layout.tenant_folders(t) == layout.source_folders(t, "*", "*") + [f"deadletter/*/*/{t}", f"erasure/{t}",
                                                                              f"discovery/{t}"]
    assert layout.discovery_file(t, p) == f"discovery/{t}/{p}/candidates.json"
    assert landing_events(t) == f"landing/{t}/*/*/*/*.json"
    assert landing_events(t, p, s) == f"landing/{t}/{p}/{s}/*/*.json"
    assert landing_deliveries(t) == f"landing/{t}/*/*/_deliveries/*"


@pytest.mark.parametrize("name", ["..", ".", "", "a/b", "../acme", ".hidden", "a\\b", "acme\n", "a b", None])
def test_a_name_that_is_not_one_plain_folder_never_becomes_a_lake_path(name):
    from crawl_assets.lake import layout

    with pytest.raises(ValueError, match="invalid lake folder name"):
        layout.source_dir("raw", name, "x", "s")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        layout.erasure_log(name)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        layout.quarantine_file("acme", "x", "s", name)  # type: ignore[arg-type]


@pytest.mark.parametrize("relative", ["../outside", "raw/../../outside", "/etc/passwd", "raw/./x", "a\\..\\b",
                                      "file:///etc/passwd", "raw/a\x00b"])
def test_the_lake_refuses_a_path_that_leaves_its_root(tmp_path, relative):
    (tmp_path / "outside").write_bytes(b"secret")
    lake = Lake(str(tmp_path / "lake"))
    for use in (lake.path, lake.read_bytes, lake.exists, lake.remove, lake.remove_tree, lake.glob):
        with pytest.raises(ValueError, match="not a plain path under the lake root"):
            use(relative)
    with pytest.raises(ValueError):
        lake.write_bytes(relative, b"x")
    assert (tmp_path / "outside").read_bytes() == b"secret"


def test_relative_accepts_only_paths_under_the_root(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    assert lake.relative(lake.path("raw/a/b/c/d.jsonl.gz")) == "raw/a/b/c/d.jsonl.gz"
    for outside in (str(tmp_path / "other" / "x.jsonl"), str(tmp_path / "lake-2" / "x.jsonl"), "/etc/passwd"):
        with pytest.raises(ValueError, match="is not under the lake root"):
            lake.relative(outside)


@pytest.mark.parametrize("root", ["local", "memory://areas-test"])
def test_area_operations_on_any_filesystem(tmp_path, root):
    lake = Lake(str(tmp_path / "lake") if root == "local" else root)
    assert lake.tenants() == [] and lake.tenant_sources("acme") == [] and not lake.has_tenant_data("acme")
    lake.write_raw_batch(tenant="acme", platform="x", source="acme.x.a", batch_id="B1", fmt="x-v2", method="api",
                         run_id=None, lines=[b"{}"])
    lake.write_quarantine("acme", "x", "acme.x.a", "B1", [{"reason": "r"}])
    lake.write_bytes("landing/beta/intercom/beta.intercom.s/20260101/E1.json", b"{}")
    assert lake.tenants() == ["acme", "beta"]
    assert lake.tenant_sources("acme") == [("x", "acme.x.a")] and lake.has_tenant_data("beta")
    assert lake.glob("quarantine/acme/*/*/*.jsonl") == ["quarantine/acme/x/acme.x.a/B1.jsonl"]
    assert lake.remove_batch("acme", "x", "acme.x.a", "B1", raw=True) == 3  # data, manifest, quarantine
    assert lake.raw_batches("acme", "x", "acme.x.a") == []

    assert lake.read_erasure_log("acme") == []
    lake.append_erasure_log("acme", {"n": 1})
    lake.append_erasure_log("acme", {"n": 2})
    assert lake.read_erasure_log("acme") == [{"n": 1}, {"n": 2}]

    lake.write_bytes("deadletter/es/records/acme/20260102T000000Z-r-1.jsonl", b"{}\n")
    lake.write_bytes("deadletter/es/edges/acme/20260101T000000Z-r-1.jsonl", b"{}\n")
    assert lake.deadletter_files("acme") == ["deadletter/es/edges/acme/20260101T000000Z-r-1.jsonl",
                                             "deadletter/es/records/acme/20260102T000000Z-r-1.jsonl"]
    lake.replace_file("deadletter/es/edges/acme/20260101T000000Z-r-1.jsonl", b"[]\n")
    assert lake.read_bytes("deadletter/es/edges/acme/20260101T000000Z-r-1.jsonl") == b"[]\n"
    lake.replace_file("deadletter/es/edges/acme/20260101T000000Z-r-1.jsonl", b"\n")
    assert lake.deadletter_files("acme", "edges") == []

    lake.remove_source("beta", "intercom", "beta.intercom.s")
    assert lake.tenant_sources("beta") == [] and lake.glob("landing/beta/*/*/*/*.json") == []
    lake.write_bytes("discovery/acme/x/candidates.json", b"{}")  # derived from the tenant's records: goes with them
    assert lake.remove_tenant("acme") and lake.deadletter_files("acme") == [] and lake.tenant_sources("acme") == []
    assert lake.glob("discovery/acme/*/*") == []
    assert not lake.has_tenant_data("acme")
    assert lake.read_erasure_log("acme") == [{"n": 1}, {"n": 2}], "the erasure log outlives the tenant's data"
