"""Discourse's typed registry options (``DiscourseOptions``): today's lenient reading, defaults, and bad values
refused when the source is added or the registry is read, naming the option, without stopping other sources."""

from __future__ import annotations

import pytest

from crawl_assets.sources.discourse.spec import DiscourseOptions
from crawl_assets_tests.sources.options_helpers import assert_refused, entry, registry_with_a_bad_entry

FORUM = "https://forum.example.org"


def _options(**options):
    return entry("discourse", "forum", FORUM, **options).typed_options


def test_defaults():
    assert _options() == DiscourseOptions(complete_topics=True, max_topic_posts=2000, pages_per_batch=4,
                                          max_parent_fetches=200, api_username=None)


def test_read_as_before():
    o = _options(complete_topics="", max_topic_posts=0, pages_per_batch=-2, max_parent_fetches=0, api_username="")
    assert (o.complete_topics, o.max_topic_posts, o.pages_per_batch, o.max_parent_fetches, o.api_username) == \
        (True, 2000, 1, 0, None)  # empty or 0 = default, except max_parent_fetches where 0 means none
    assert _options(max_parent_fetches=-5, max_topic_posts="30", api_username="crawler.bot").model_dump() == \
        {**DiscourseOptions().model_dump(), "max_parent_fetches": 0, "max_topic_posts": 30, "api_username": "crawler.bot"}
    for off in (False, "false", "no", "0", 0, "FALSE"):
        assert _options(complete_topics=off).complete_topics is False, off
    for on in (True, "true", "yes", "1", 1, "On"):
        assert _options(complete_topics=on).complete_topics is True, on


@pytest.mark.parametrize("option, value, message", [
    ("complete_topics", "maybe", "must be true or false"),
    ("max_topic_posts", "lots", "must be a whole number, not 'lots'"),
    ("pages_per_batch", "2.5", "must be a whole number"),
    ("api_username", "bot\r\nX-Injected: 1", "String should match pattern"),
    ("max_parents", 3, "unknown option 'max_parents' for discourse forum sources; known: complete_topics, max_topic"),
])
def test_a_bad_value_is_refused_naming_the_option(option, value, message):
    assert_refused("discourse", "forum", FORUM, option, value, message)


def test_a_bad_entry_in_the_registry_does_not_stop_the_others(tmp_path):
    reg = registry_with_a_bad_entry(tmp_path, "discourse", "forum", FORUM, good={"pages_per_batch": 2},
                                    bad={"pages_per_batch": 2, "complete_topics": "maybe"})
    assert [e.name for e in reg.entries] == ["first", "last"]
    assert reg.entries[0].typed_options.pages_per_batch == 2
    (err,) = reg.errors
    line = reg.path.read_text().splitlines().index("    complete_topics: maybe") + 1
    assert (err.name, err.field, err.line) == ("broken", "options.complete_topics", line)
    assert str(err).startswith(f"{reg.path}:{line}: entry 2 ('broken'): field 'options.complete_topics': must be")
