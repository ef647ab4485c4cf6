"""Telegram's typed registry options (``TelegramOptions``): today's lenient reading, defaults, and bad values
refused when the source is added or the registry is read, naming the option, without stopping other sources."""

from __future__ import annotations

import pytest

from crawl_assets.sources.telegram.spec import TelegramOptions
from crawl_assets_tests.sources.options_helpers import assert_refused, entry, registry_with_a_bad_entry


def _options(kind: str = "channel", **options):
    return entry("telegram", kind, "@acme_news", **options).typed_options


def test_defaults():
    assert _options() == _options("group") == TelegramOptions(
        comments=False, download_media=False, media_max_bytes=20 * 1024 * 1024, takeout=False, metadata_every_hours=24.0)


def test_read_as_before():
    o = _options(comments="yes", download_media=False, takeout="false")
    assert (o.comments, o.download_media, o.takeout) == (True, False, False)
    o = _options(comments="", download_media="ON", takeout=1, media_max_bytes="", metadata_every_hours=0)
    assert o.model_dump() == {"comments": False, "download_media": True, "takeout": True,
                              "media_max_bytes": 20 * 1024 * 1024, "metadata_every_hours": 24.0}
    o = _options(media_max_bytes="1048576", metadata_every_hours="0.5")
    assert (o.media_max_bytes, o.metadata_every_hours) == (1 << 20, 0.5)


@pytest.mark.parametrize("option, value, message", [
    ("comments", "maybe", "must be true or false"),
    ("takeout", 2, "must be true or false"),
    ("media_max_bytes", -1, "Input should be greater than 0"),
    ("media_max_bytes", "20MB", "Input should be a valid integer"),
    ("metadata_every_hours", -24, "Input should be greater than 0"),
    ("metadata_every_hours", "nan", "Input should be a finite number"),
    ("comment", True, "unknown option 'comment' for telegram channel sources; known: comments, download_media,"),
])
def test_a_bad_value_is_refused_naming_the_option(option, value, message):
    assert_refused("telegram", "channel", "@acme_news", option, value, message)


def test_export_files_keep_their_own_options():
    assert entry("telegram", "export_file", "result.json", timezone="Asia/Tehran").options == {"timezone": "Asia/Tehran"}


def test_a_bad_entry_in_the_registry_does_not_stop_the_others(tmp_path):
    reg = registry_with_a_bad_entry(tmp_path, "telegram", "channel", "@acme_news", good={"comments": True},
                                    bad={"comments": True, "media_max_bytes": -1})
    assert [e.name for e in reg.entries] == ["first", "last"]
    assert reg.entries[0].typed_options.comments is True and reg.entries[1].typed_options.comments is False
    (err,) = reg.errors
    line = reg.path.read_text().splitlines().index("    media_max_bytes: -1") + 1
    assert (err.name, err.field, err.line, err.message) == \
        ("broken", "options.media_max_bytes", line, "Input should be greater than 0")
