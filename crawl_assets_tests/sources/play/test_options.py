"""Google Play's typed registry options (``PlayOptions``): today's lenient reading, defaults, and bad values
refused when the source is added or the registry is read, naming the option, without stopping other sources."""

from __future__ import annotations

from datetime import timedelta

import pytest

from crawl_assets.registry import SourceEntry
from crawl_assets.sources.play.spec import PlayOptions
from crawl_assets.sources.play.sync import CadenceError, check_cadence, max_interval_minutes
from crawl_assets_tests.sources.options_helpers import assert_refused, entry, registry_with_a_bad_entry

PACKAGE = "com.acme.app"


def _options(**options):
    return entry("play", "app", PACKAGE, **options).typed_options


def test_defaults():
    o = _options()
    assert o == PlayOptions(window_days=7.0, max_results=100, pages_per_batch=5, translation_language=None)
    assert o.window == timedelta(days=7) and max_interval_minutes(o.window) == 5040


def test_read_as_before():
    o = _options(window_days=0, max_results=500, pages_per_batch=0, translation_language="")
    assert (o.window, o.max_results, o.pages_per_batch, o.translation_language) == (timedelta(days=7), 100, 5, None)
    o = _options(window_days="3.5", max_results=-4, pages_per_batch="2", translation_language="pt-BR")
    assert (o.window, o.max_results, o.pages_per_batch, o.translation_language) == \
        (timedelta(days=3.5), 1, 2, "pt-BR")
    slow = SourceEntry(name="app", platform="play", kind="app", identifier=PACKAGE, options={"window_days": 2},
                       policy={"interval_minutes": 1441})
    with pytest.raises(CadenceError, match="at most 1440"):  # the cadence check reads the typed window
        check_cadence(slow, slow.typed_options)


@pytest.mark.parametrize("option, value, message", [
    ("window_days", -1, "Input should be greater than 0"),
    ("window_days", "inf", "Input should be a finite number"),
    ("window_days", 1e9, "Input should be less than or equal to 3650"),
    ("max_results", "all", "must be a whole number, not 'all'"),
    ("translation_language", "en&key=x", "String should match pattern"),
    ("window", 7, "unknown option 'window' for play app sources; known: window_days, max_results,"),
])
def test_a_bad_value_is_refused_naming_the_option(option, value, message):
    assert_refused("play", "app", PACKAGE, option, value, message)


def test_export_files_keep_their_own_options():
    assert entry("play", "export_file", "reviews.csv", format="play-csv").export_format == "play-csv"


def test_a_bad_entry_in_the_registry_does_not_stop_the_others(tmp_path):
    reg = registry_with_a_bad_entry(tmp_path, "play", "app", PACKAGE, good={"max_results": 20},
                                    bad={"max_results": 20, "window_days": -7})
    assert [e.name for e in reg.entries] == ["first", "last"]
    assert reg.entries[0].typed_options.max_results == 20
    (err,) = reg.errors
    line = reg.path.read_text().splitlines().index("    window_days: -7") + 1
    assert (err.name, err.field, err.line, err.message) == \
        ("broken", "options.window_days", line, "Input should be greater than 0")
