"""Search on the pipeline-built index: Persian-aware matching, every filter, deep pagination by cursor."""

from __future__ import annotations

import pytest

from crawl_assets_tests.api.conftest import auth
from crawl_assets_tests.api.corpus import NEW, RISING, ZWNJ


def keys(page: dict) -> set[str]:
    return {r["key"] for r in page["records"]}


@pytest.mark.parametrize("query", [f"دانش{ZWNJ}آموزان", "دانشآموزان"])
def test_a_persian_compound_is_found_with_or_without_zwnj(demo, query: str) -> None:
    found = keys(demo("/v1/search", q=query, size=50))
    assert {"x:9300", "x:9301"} <= found, found
    assert "x:9303" not in found, "دانشگاه is another word"
    if ZWNJ in query:
        assert "x:9302" in found, "a ZWNJ query also finds the spelling with a space"


def test_filters_narrow_the_results(demo) -> None:
    everything = demo("/v1/search", size=1)["total"]
    assert everything > 600
    gen_a = demo("/v1/search", source="gen-a", size=500)
    assert gen_a["total"] > 80 and all(r["source"] == "demo.x.gen-a" for r in gen_a["records"])
    # A hashtag typed with an Arabic yeh and a '#' is folded like the index folds hashtags.
    tagged = demo("/v1/search", hashtag="#" + RISING.replace("ی", "ي"), source="gen-a", size=100)
    assert tagged["total"] == 19 and all(RISING in r["hashtags"] for r in tagged["records"])
    assert demo("/v1/search", platform="telegram", size=5)["records"][0]["platform"] == "telegram"
    march5 = demo("/v1/search", start="2026-03-05T00:00:00Z", end="2026-03-06", source="gen-a", size=100)
    assert march5["total"] == 30 and {r["created_at"][:10] for r in march5["records"]} == {"2026-03-05"}
    by_author = demo("/v1/search", author="@Analyst_B", source="gen-a", size=100)
    assert by_author["total"] > 0 and {r["author_id"] for r in by_author["records"]} == {"502"}
    assert keys(demo("/v1/search", hashtag=NEW, lang="fa", size=10)) == {r["key"] for r in
                                                                       demo("/v1/search", hashtag=NEW, size=10)["records"]}
    assert demo("/v1/search", mention="analyst_b", kind="reply", size=50)["total"] >= 1


def test_tombstones_are_left_out_unless_asked_for(demo) -> None:
    assert "x:9201" not in keys(demo("/v1/search", q="پاک", size=50))
    only = demo("/v1/search", deleted="only", source="gen-a", size=50)
    assert "x:9201" in keys(only) and all(r["deleted"] for r in only["records"])
    assert "x:9201" in keys(demo("/v1/search", deleted="include", source="gen-a", size=500))


def test_sorts_newest_oldest_and_relevance(demo) -> None:
    newest = [(r["created_at"], r["key"]) for r in demo("/v1/search", source="gen-b", sort="newest", size=100)["records"]]
    oldest = [(r["created_at"], r["key"]) for r in demo("/v1/search", source="gen-b", sort="oldest", size=100)["records"]]
    assert len(newest) > 10 and [t for t, _ in newest] == sorted((t for t, _ in newest), reverse=True)
    assert [t for t, _ in oldest] == sorted(t for t, _ in oldest) and newest[0] != oldest[0]
    # relevance without words to score is newest (documented); with words, every match is found either way
    assert demo("/v1/search", source="gen-b", size=100)["records"] == \
        demo("/v1/search", source="gen-b", sort="newest", size=100)["records"]
    by_score = demo("/v1/search", q="خبر", sort="relevance", size=500)
    by_date = demo("/v1/search", q="خبر", sort="newest", size=500)
    assert by_score["total"] == by_date["total"] > 0 and keys(by_score) == keys(by_date)


def test_deep_pagination_visits_every_match_once_in_order(demo) -> None:
    total = demo("/v1/search", source="gen-b", size=1)["total"]
    seen, cursor, pages = [], None, 0
    while True:
        params = {"source": "gen-b", "sort": "oldest", "size": 37, **({"cursor": cursor} if cursor else {})}
        page = demo("/v1/search", **params)
        seen += [(r["created_at"], r["key"]) for r in page["records"]]
        pages += 1
        cursor = page["next"]
        if not cursor:
            break
    assert len(seen) == total == len(set(seen)) and seen == sorted(seen) and pages == -(-total // 37)


def test_a_cursor_is_bound_to_its_query_and_tenant_and_expires(demo, world, api) -> None:
    first = demo("/v1/search", q="خبر", size=2)
    cursor = first["next"]
    assert cursor
    changed = api.get("/v1/search", params={"q": "خبر", "size": 3, "cursor": cursor}, headers=auth(world))
    assert changed.status_code == 400 and "another query" in changed.json()["message"]
    forged = cursor[:-4] + ("AAAA" if not cursor.endswith("AAAA") else "BBBB")
    assert api.get("/v1/search", params={"q": "خبر", "size": 2, "cursor": forged}, headers=auth(world)).status_code == 400
    other = api.get("/v1/search", params={"q": "خبر", "size": 2, "cursor": cursor}, headers=auth(world, "rival"))
    assert other.status_code == 400
    state = api.app.state.api
    key_id = world.keys["demo"][4:16]
    held = set(state.snapshots._held.get(key_id, {}))
    second = demo("/v1/search", q="خبر", size=2, cursor=cursor)
    opened = {chain: pit for chain, (pit, _) in state.snapshots._held[key_id].items() if chain not in held}
    assert second["next"] and len(opened) == 1, "the second page opens the snapshot later pages read"
    world.es.close_point_in_time(id=next(iter(opened.values())))
    gone = api.get("/v1/search", params={"q": "خبر", "size": 2, "cursor": second["next"]}, headers=auth(world))
    assert gone.status_code == 410 and gone.json()["error"] == "cursor_expired"


def test_no_offset_parameter_exists(api) -> None:
    params = {p["name"] for p in api.get("/openapi.json").json()["paths"]["/v1/search"]["get"]["parameters"]}
    assert "from" not in params and "offset" not in params and {"cursor", "size"} <= params
