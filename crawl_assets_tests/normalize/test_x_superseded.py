"""Earlier versions of an edited X post make no edges (CLI ``--relations-out`` and the lake's
``relation_edges``), and a version stored before the post's edit is marked superseded whichever batch
came first."""

from __future__ import annotations

import json
from collections import Counter

from click.testing import CliRunner

from crawl_assets.pipeline.relate.stage import write_relations
from crawl_assets.cli.normalize import normalize
from crawl_assets_tests.normalize.shapes import lines, x_page, x_tweet
from crawl_assets_tests.normalize.test_x_edits import OBSERVATIONS, V1, V2, V3
from crawl_assets_tests.pipeline.lake_normalize import RawInput, normalize_in_lake

TAGS = {"hashtags": [{"start": 0, "end": 7, "tag": "tehran"}, {"start": 8, "end": 13, "tag": "news"}]}


def _tagged(tweet_id: str, history: list[str]) -> bytes:
    return x_page(x_tweet(tweet_id, f"#tehran #news take {tweet_id[-4:]}", edit_history_tweet_ids=history,
                          entities=TAGS))


def test_cli_edges_come_from_the_live_version_only(tmp_path):
    path, edges = tmp_path / "pages.jsonl", tmp_path / "edges.jsonl"
    path.write_bytes(lines(_tagged(V1, [V1]), _tagged(V2, [V1, V2]), _tagged(V3, [V1, V2, V3])))
    result = CliRunner().invoke(normalize, ["--format", "x-v2", "--relations-out", str(edges), str(path)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in edges.read_text().splitlines()]
    assert Counter(r["dst"] for r in rows if r["type"] == "hashtag") == {"hashtag:tehran": 1, "hashtag:news": 1}
    assert {r["src"] for r in rows} == {f"x:{V3}"}


def test_lake_edges_come_from_the_live_version_only(tmp_path):
    source = "acme.x.edited"
    normalize_in_lake(tmp_path / "lake", "x", source, [
        RawInput("20240502T110000000000Z-r1-0000", "x-v2", [_tagged(V1, [V1]), _tagged(V2, [V1, V2]),
                                                            _tagged(V3, [V1, V2, V3])], method="api")])
    from crawl_assets.lake import Lake

    lake = Lake(str(tmp_path / "lake"))
    write_relations(lake, "acme", "x", source)
    edges = [e for _, t in lake.read_parts("relation_edges", "acme", "x", source) for e in t.to_pylist()]
    assert {e["src"] for e in edges} == {f"x:{V3}"}
    assert Counter(e["dst"] for e in edges if e["type"] == "hashtag") == {"hashtag:tehran": 1, "hashtag:news": 1}


def test_an_old_version_arriving_after_the_edit_is_marked_superseded(tmp_path):
    source = "acme.x.edited"
    outcome = normalize_in_lake(tmp_path / "lake", "x", source, [
        RawInput("20240502T120000000000Z-r1-0000", "x-v2", [OBSERVATIONS[2]], method="api"),  # V3, whole history
        RawInput("20240502T130000000000Z-r1-0000", "x-v2", [OBSERVATIONS[0]], method="api"),  # V1 read alone
    ])  # fmt: skip
    later = {r["key"]: r for r in outcome.parts["20240502T130000000000Z-r1-0000"]}
    assert later[f"x:{V1}"]["metadata"]["superseded_by"] == f"x:{V3}"
    assert later[f"x:{V1}"]["metadata"]["edit_history_tweet_ids"] == [V1, V2, V3]
    latest = {**{r["key"]: r for r in outcome.parts["20240502T120000000000Z-r1-0000"]}, **later}
    assert [k for k, r in latest.items() if "superseded_by" not in r["metadata"]] == [f"x:{V3}"]
