"""The shipped Kibana saved objects import cleanly: valid NDJSON, every reference resolves, fields exist."""

from __future__ import annotations

import json
from importlib import resources

from crawl_assets.index.bootstrap import load_template


def test_saved_objects_reference_each_other_and_mapped_fields() -> None:
    text = resources.files("crawl_assets.index").joinpath("kibana", "crawl_overview.ndjson").read_text("utf-8")
    objects = [json.loads(line) for line in text.splitlines() if line.strip()]
    ids = {(o["type"], o["id"]) for o in objects}
    assert ("index-pattern", "crawl-records") in ids and ("dashboard", "crawl-overview") in ids
    for obj in objects:
        for ref in obj["references"]:
            assert (ref["type"], ref["id"]) in ids, ref
    props = load_template("records")["template"]["mappings"]["properties"]
    fields = {agg["params"]["field"] for o in objects if o["type"] == "visualization"
              for agg in json.loads(o["attributes"]["visState"])["aggs"] if "field" in agg["params"]}
    assert fields == {"created_at", "platform", "hashtags", "lang"} and fields <= set(props)
    titles = {o["attributes"]["title"] for o in objects if o["type"] == "visualization"}
    assert titles == {"Volume over time", "Top hashtags", "Languages"}
