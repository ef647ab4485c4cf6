"""What a newcomer sees in the Dagster UI after the demo plus one failing source (``ui_stack``), in a real
headless Chromium (Debian's ``chromium``; ``.ci/run`` installs it) driven by Playwright.

Asserts on each page's text, and writes the screenshots the README shows (into ``docs/img/`` with
``CRAWL_UPDATE_SCREENSHOTS=1``, else into the test's temporary folder, so a test run never edits the tree):
- ``lineage.png``: the X group's lineage, raw → normalized_records → relation_edges → search_index, and
  ``sources`` with the health checks; no check reads "0 / N Passed" (never evaluated);
- ``partitions.png``: the raw asset's partitions, the failing source *Failed* with its failed run, whose
  logs (one click, "View logs") give the reason: paused, and the variable to set;
- ``paused_partition.png``: a source that synced before and is now paused: its partition page shows the
  reason and how to resume;
- ``degraded.png``: a truncated export's partition reads *degraded* with the first rejection's reason, and
  ``degraded_check.png``: the failing check names that source's partition only;
- ``normalized_records.png``: a source's latest ``normalized_records`` materialization with its preview;
- ``plots.png``: the raw asset's numeric per-sync metadata, plotted (records, the newest item's age in days,
  duration; nothing that is zero by construction for an export).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.ui.conftest import DEGRADED, EXPORTS, FAILING, PAUSED

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT_MS = 120_000  # a loaded 2-core machine renders slowly

REQUIRED = os.environ.get("CRAWL_TEST_REQUIRE_BROWSER") == "1"  # .ci/run: a missing browser fails, not skips

pytestmark = pytest.mark.skipif(not REQUIRED and not Path(CHROMIUM).exists(),
                                reason="Chromium is not installed (.ci/run installs it)")


@pytest.fixture(scope="module")
def img(tmp_path_factory) -> Path:
    """Where the screenshots go: the README's docs/img/ when asked to refresh them."""
    return REPO / "docs" / "img" if os.environ.get("CRAWL_UPDATE_SCREENSHOTS") == "1" else tmp_path_factory.mktemp("img")


@pytest.fixture(scope="module")
def page(ui_stack, tmp_path_factory):
    if REQUIRED:
        assert Path(CHROMIUM).exists(), f"CRAWL_TEST_REQUIRE_BROWSER=1 but {CHROMIUM} is missing"
        from playwright import sync_api
    else:
        sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium_profile")), executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1600, "height": 1000})
        context.set_default_timeout(WAIT_MS)
        page = context.new_page()
        page.base_url = ui_stack.url  # type: ignore[attr-defined]
        _dismiss_first_visit_dialog(page)
        yield page
        context.close()


def _dismiss_first_visit_dialog(page) -> None:
    """Dagster asks a first visitor about security updates and a newsletter in a modal whose backdrop takes
    every click until it is skipped. The shipped instance turns it off (``nux: enabled: false``), so nothing is
    waited for: open the UI once, let it settle, and skip the dialog if it shows (``visit`` skips one that
    renders later, as it did on a loaded machine before the instance turned it off)."""
    page.goto(page.base_url + "/", wait_until="domcontentloaded")
    page.wait_for_load_state("networkidle")
    skip = page.get_by_role("button", name="Skip")
    if skip.count() and skip.is_visible():
        skip.click()
        skip.wait_for(state="hidden")


def visit(page, path: str, *texts: str) -> str:
    """Open ``path``, dismiss Dagster's first-visit dialog if it shows, wait for ``texts``; return the page's text."""
    page.goto(page.base_url + path, wait_until="domcontentloaded")
    skip = page.get_by_role("button", name="Skip")
    page.wait_for_load_state("networkidle")
    if skip.count():
        skip.click()
    for text in texts:
        page.get_by_text(text, exact=False).first.wait_for(state="visible")
    if skip.count() and skip.is_visible():  # rendered late: skip it before reading or clicking anything
        skip.click()
        skip.wait_for(state="hidden")
    return page.inner_text("body")


def test_lineage_of_a_platform(page, img):
    # the partition and check facets load after the nodes (slowly on a loaded machine): wait for them
    text = visit(page, "/asset-groups~group%3A%22x%22", "x_posts_raw", "normalized_records", "relation_edges",
                 "search_index", "60% filled", "2 / 2 Passed", "2 / 3 Passed")
    page.get_by_text("Asset checks").first.wait_for(state="visible")  # the nodes' facets have rendered
    text = page.inner_text("body")
    assert "60% filled (2 failed)" in text  # the raw asset: 3 of 5 sources synced, two failed (paused)
    # Checks that never ran (or ran before the latest materialization) would read "0 / N Passed": none do. The
    # failing sources fail no check; the degraded one fails only no_failed_batches, on its own partition.
    assert re.search(r"\b2 / 2 Passed", text) and not re.search(r"\b0 / \d+ Passed", text), text
    assert re.search(r"\b2 / 3 Passed", text) and re.search(r"\b1 / 1 Passed", text), text
    page.screenshot(path=str(img / "lineage.png"))


def test_the_failing_source_reads_failed_with_its_run_and_reason(page, ui_stack, img):
    run = ui_stack.batch_run_id[:8]
    text = visit(page, f"/assets/x/x_posts_raw?view=partitions&partition={FAILING}",
                 f"Run {run} failed, and did not materialize this asset.")
    assert re.search(r"Failed \(2\)", text) and re.search(r"Materialized \(3\)", text), text[:2000]
    assert re.search(r"Missing \(0\)", text)
    for key in (FAILING, *EXPORTS, DEGRADED, PAUSED):
        assert key in text
    page.screenshot(path=str(img / "partitions.png"))

    page.get_by_role("button", name="View logs").click()
    page.get_by_text("CRAWL_X_BEARER_TOKEN", exact=False).first.wait_for(state="visible")
    logs = page.inner_text("body")
    assert f"{FAILING}: x/x_posts_raw: source '{FAILING}' paused" in logs
    assert "is not configured: set CRAWL_X_BEARER_TOKEN__" in logs
    page.keyboard.press("Escape")


def test_a_paused_source_shows_the_reason_on_its_partition(page, img):
    text = visit(page, f"/assets/x/x_posts_raw?view=partitions&partition={PAUSED}", "Mars/Olympus")
    assert "failed, and did not materialize this asset" in text and "sync_failed" in text, text[:3000]
    assert f"(resume: crawl-assets sources resume {PAUSED})" in text
    page.screenshot(path=str(img / "paused_partition.png"))


def test_a_degraded_source_reads_degraded_on_its_partition_and_its_check(page, img):
    text = visit(page, f"/assets/x/x_posts_raw?view=partitions&partition={DEGRADED}", "degraded")
    assert "invalid JSON: unexpected end of data" in text and "1 of 2 items rejected" in text, text[:3000]
    page.screenshot(path=str(img / "degraded.png"))
    text = visit(page, "/assets/x/normalized_records?view=checks&checkDetail=no_failed_batches", "Partitions")
    page.locator("button[role=tab]", has_text="Partitions").click()  # the check's tab, not the asset's link
    page.get_by_text(DEGRADED).first.wait_for(state="visible")
    text = page.inner_text("body")
    assert "Failed (1)" in text and "Execution Failed (0)" in text and "Passed (3)" in text, text[:3000]
    page.get_by_text(DEGRADED, exact=True).first.click()  # its evaluation: the description names source and reason
    page.get_by_text(f"{DEGRADED} degraded: invalid JSON", exact=False).first.wait_for(state="visible")
    page.screenshot(path=str(img / "degraded_check.png"))


def test_normalized_records_shows_a_preview_and_counts(page, img):
    key = "demo.telegram.sample-channel"
    text = visit(page, f"/assets/telegram/normalized_records?view=partitions&partition={key}",
                 "Newest records of batch", "records_by_lang")
    assert "Materialized" in text and "records_written" in text and "195" in text
    assert re.search(r"time\s+lang\s+kind\s+state", text), "the preview renders as a table"
    assert len(re.findall(r"\d{4}-\d\d-\d\dT\d\d:\d\dZ", text)) >= 5 and "telegram:1987654321:" not in text
    assert '"fa": 110' in text and '"post": 148' in text
    assert "quarantine_files" not in text, "nothing was rejected: no quarantine listed beside rejected 0"
    page.get_by_text("not_posts", exact=True).first.scroll_into_view_if_needed()  # the row below the preview
    page.screenshot(path=str(img / "normalized_records.png"))


def test_per_sync_numbers_plot_on_the_raw_asset(page, img):
    visit(page, "/assets/x/x_posts_raw?view=overview", "Metadata")
    page.get_by_role("button", name="Plots").click()
    labels = ("records_fetched", "records_new", "newest_item_age_days", "duration_seconds")
    for view in ("Partitions", "Events"):  # per source (latest sync), then every sync over time
        page.get_by_role("button", name=view).click()
        for label in labels:
            page.get_by_text(label, exact=True).first.wait_for(state="visible")
        assert page.locator("canvas").count() >= len(labels)  # one chart per numeric label
        text = page.inner_text("body")
        assert "No numeric metadata entries" not in text
        # the X sources here are export files: no request count or rate-limit wait (zero by construction), no
        # lag in seconds (their newest item's age plots in days)
        assert not re.search(r"^(requests|rate_limit_wait_seconds|newest_event_lag_seconds)$", text, re.M), text[:3000]
    page.get_by_text("records_fetched", exact=True).first.scroll_into_view_if_needed()
    page.screenshot(path=str(img / "plots.png"))
