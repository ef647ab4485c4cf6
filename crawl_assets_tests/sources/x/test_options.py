"""X's typed registry options (``XOptions``) and what they mean for one sync of a kind (``SyncPlan``): today's
lenient reading, defaults, and bad values refused when the source is added or the registry is read, naming
the option, without stopping other sources."""

from __future__ import annotations

from datetime import timedelta

import pytest
from click.testing import CliRunner

from crawl_assets.cli.main import cli
from crawl_assets.sources.x.client import SEARCH_ALL, SEARCH_RECENT, USER_TWEETS
from crawl_assets.sources.x.plan import SyncPlan
from crawl_assets.sources.x.spec import XOptions
from crawl_assets_tests.sources.options_helpers import assert_refused, entry, registry_with_a_bad_entry


def _timeline(**options):
    return entry("x", "account_timeline", "data_eng", **options)


def _search(**options):
    return entry("x", "search_query", "python lang:fa", **options)


def test_defaults():
    assert _search().typed_options == _timeline().typed_options == XOptions(
        endpoint="recent", max_results=None, pages_per_batch=5, complete_threads=False, max_parent_lookups=500,
        backfill_window_hours=None, exclude=None)
    assert SyncPlan.of(_timeline()) == SyncPlan(USER_TWEETS, 100, 5, False, 500, timedelta(hours=24), None)
    assert SyncPlan.of(_search()) == SyncPlan(SEARCH_RECENT, 100, 5, False, 500, timedelta(hours=24), None)
    assert SyncPlan.of(_search(endpoint="all")) == SyncPlan(SEARCH_ALL, 500, 5, False, 500, timedelta(days=30), None)


def test_read_as_before():
    # empty or 0 = default; a page size brought into the endpoint's limits; at least one hour and one page
    plan = SyncPlan.of(_search(endpoint="", max_results=0, pages_per_batch=0, max_parent_lookups=0,
                               backfill_window_hours=0, complete_threads="", exclude=""))
    assert plan == SyncPlan.of(_search())
    assert SyncPlan.of(_timeline(max_results=1)).page_size == 5
    assert SyncPlan.of(_search(max_results=1)).page_size == 10
    assert SyncPlan.of(_search(max_results=1000)).page_size == 100
    assert SyncPlan.of(_search(endpoint="all", max_results="1000")).page_size == 500
    plan = SyncPlan.of(_timeline(pages_per_batch=-3, max_parent_lookups=-1, backfill_window_hours=-5,
                                 complete_threads="yes", exclude="retweets,replies"))
    assert (plan.pages_per_batch, plan.max_parent_lookups, plan.window, plan.complete_threads, plan.exclude) == \
        (1, 0, timedelta(hours=1), True, "retweets,replies")
    assert SyncPlan.of(_search(complete_threads="no")).complete_threads is False  # was read as true before


def test_kinds_not_collected_live_are_refused_at_sync():
    archive = entry("x", "export_file", "tweets.js", format="x-archive")
    with pytest.raises(ValueError, match="X sources of kind 'export_file' are not collected live"):
        SyncPlan.of(archive)


@pytest.mark.parametrize("option, value, message", [
    ("endpoint", "everything", "Input should be 'recent' or 'all'"),
    ("endpoint", "All", "Input should be 'recent' or 'all'"),
    ("max_results", "lots", "must be a whole number, not 'lots'"),
    ("complete_threads", "sometimes", "must be true or false"),
    ("backfill_window_hours", "1d", "must be a whole number"),
    ("exclude", "likes", "String should match pattern"),
    ("exclude", "replies,", "String should match pattern"),
    ("max_result", 10, "unknown option 'max_result' for x "),
])
def test_a_bad_value_is_refused_naming_the_option(option, value, message):
    for kind, identifier in (("search_query", "python"), ("account_timeline", "data_eng")):
        assert_refused("x", kind, identifier, option, value, message)


def test_a_bad_entry_in_the_registry_does_not_stop_the_others(tmp_path):
    reg = registry_with_a_bad_entry(tmp_path, "x", "search_query", "python", good={"endpoint": "all"},
                                    bad={"max_results": 50, "endpoint": "everything"})
    assert [e.key for e in reg.entries] == ["acme.x.first", "acme.x.last"]
    assert [SyncPlan.of(e).endpoint for e in reg.entries] == [SEARCH_ALL, SEARCH_RECENT]
    (err,) = reg.errors
    line = reg.path.read_text().splitlines().index("    endpoint: everything") + 1
    assert str(err) == f"{reg.path}:{line}: entry 2 ('broken'): field 'options.endpoint': Input should be 'recent' or 'all'"


def test_sources_add_refuses_a_bad_option(tmp_path):
    registry = tmp_path / "sources.yaml"

    def add(name, *options):
        args = ["sources", "add", "--platform", "x", "--kind", "search_query", "--identifier", "python", "--name", name,
                "--tenant", "acme", "--registry", str(registry)]
        return CliRunner().invoke(cli, args + [a for o in options for a in ("--option", o)])

    refused = add("sq", "endpoint=everything", "max_results=50")
    assert refused.exit_code == 2 and \
        "source 'sq': field 'options.endpoint': Input should be 'recent' or 'all'" in refused.output, refused.output
    assert not registry.exists()
    added = add("sq", "endpoint=all", "complete_threads=true")
    assert added.exit_code == 0 and "added acme.x.sq" in added.output, added.output
