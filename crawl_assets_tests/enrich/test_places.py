"""Places on a labelled set of our own (Persian, Arabic, English) and on records as the lake stores them."""

from __future__ import annotations

import pytest

from crawl_assets.enrich.gazetteer import load
from crawl_assets.enrich.places import PlaceMentions
from crawl_assets.normalize.text import clean_text
from crawl_assets_tests.enrich.places_eval import EVAL
from crawl_assets_tests.enrich.records import record, table


def _resolve(expected: str) -> str:
    """``city:XX:Name`` of the labelled set as the gazetteer's id (the most populous city of that name)."""
    if not expected.startswith("city:"):
        return expected
    _, country, name = expected.split(":", 2)
    found = [p for p in load().places.values() if p.kind == "city" and p.country == country and p.name == name]
    assert found, f"labelled city {expected} is not in the gazetteer"
    return max(found, key=lambda p: p.population).id


def _scores(lang: str | None) -> tuple[float, float, list[str]]:
    places = PlaceMentions()
    tp = fp = fn = 0
    wrong = []
    for text_lang, text, expected in EVAL:
        if lang and text_lang != lang:
            continue
        want = {_resolve(e) for e in expected}
        got = {m["place_id"] for m in places.find(clean_text(text))}
        tp, fp, fn = tp + len(got & want), fp + len(got - want), fn + len(want - got)
        if got != want:
            wrong.append(f"{text}: missing {want - got}, extra {got - want}")
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1), wrong


@pytest.mark.parametrize("lang", ["fa", "ar", "en", None])
def test_precision_and_recall_on_the_labelled_set(lang):
    precision, recall, wrong = _scores(lang)
    assert precision >= 0.9 and recall >= 0.8, (precision, recall, wrong)


def test_look_alikes_name_no_place():
    places = PlaceMentions()
    for text in ("nice weather, reading on my mobile", "امید داریم فردا بهتر شود", "زرت مدينة جميلة"):
        assert places.find(clean_text(text)) == [], text
    assert places.find("Nice is lovely in May") == [], "a city name that is a common word is never matched alone"
    assert [m["place_id"] for m in places.find("Shiraz is warm")] == [_resolve("city:IR:Shiraz")]
    assert places.find("a glass of shiraz") == [], "a one-word Latin name counts only capitalized"


def test_disambiguation_rules_and_offsets():
    places = PlaceMentions()
    text = clean_text("زلزله در استان کرمان و شهر کرمان")
    first, second = places.find(text)
    assert (first["place_id"], first["rule"]) == ("region:IR-08", "unique")
    assert second["place_id"] == _resolve("city:IR:Kerman")
    assert text[first["start"]:first["end"]] == "استان کرمان" and text[second["start"]:second["end"]] == "کرمان"
    # a name several cities share: the most populous, its confidence scaled by its share
    (london,) = places.find("London")
    assert london["place_id"] == _resolve("city:GB:London") and london["rule"] == "population"
    assert 0.5 <= london["confidence"] < 0.95
    # a region name of the package that is a word counts only beside a cue
    assert places.find("فارس") == [] and places.find("استان فارس")[0]["place_id"] == "region:IR-07"


def test_extract_reads_text_and_profile_fields_never_coordinates():
    rows = [record("x:1", "باران در تبریز", metadata={"author_location": "Berlin, Germany"}),
            record("x:2", "no place here", metadata={"coordinates": [51.5, -0.12], "lat": 35.7, "lon": 51.4}),
            record("x:3", "hello", metadata={"user_location": "Shiraz"})]
    out = PlaceMentions().extract(table(rows)).to_pylist()
    assert [r["key"] for r in out] == ["x:1", "x:3"], "coordinates alone name no place"
    first = out[0]
    assert set(first["place_ids"]) == {_resolve("city:IR:Tabriz"), _resolve("city:DE:Berlin"), "country:DE"}
    assert first["countries"][0] in ("IR", "DE") and set(first["countries"]) == {"IR", "DE"}
    assert {m["field"] for m in first["mentions"]} == {"text", "author_location"}
    assert all(r["inferred"] and r["enricher"] == "places" and r["enricher_version"].startswith("places/1+")
               for r in out)


def test_stamp_follows_parameters():
    assert PlaceMentions().stamp == PlaceMentions().stamp
    assert PlaceMentions(min_confidence=0.7).stamp != PlaceMentions().stamp
    with pytest.raises(ValueError, match="min_city_population"):
        PlaceMentions(min_city_population=123)
