"""The lake spells its areas' paths in one place (``crawl_assets.lake.layout``): each function gives exactly the
path the modules that moved to it used to spell themselves, so no existing lake loses a file."""

from __future__ import annotations

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
