"""The journey of one record stays short: a Hacker News story from the stand-in's page to an API answer on the
real node touches at most ``FILES`` product files with at most ``MOVES`` moves between them (``journey.py``
measures; docs/ARCHITECTURE.md shows the figures). A stage spread over more files raises them."""

from __future__ import annotations

from crawl_assets_tests.architecture.journey import trace

# The journey as measured; lower the bound when a change shortens it.
FILES = 50  # modules that held one concept in pieces merged (docs/ARCHITECTURE.md, the journey's table)
MOVES = 986


def test_one_record_travels_through_few_files(tmp_path, es_cluster):
    journey, hits = trace(tmp_path, es_cluster.url)
    assert hits == 1, "the story is found through the API"
    touched = {"sources/hackernews/normalize.py", "pipeline/relate/parts.py", "index/sink.py", "api/app.py"}
    assert touched <= set(journey.entered), "the trace follows the record through every stage"
    others = {f for f in journey.entered if f.startswith("sources/") and f.count("/") > 1
              and not f.startswith("sources/hackernews/")}
    assert others == set(), "a Hacker News batch runs no other platform's code (no other format's sniffer)"
    assert journey.files <= FILES and journey.move_count <= MOVES, journey.report()
