"""Entities: each rule finds what it is for in Persian, Arabic and English (with spans over text_clean), common
words that look like names are left alone, the planted sentences are found with a per-language F1 floor, and
the rows and documents carry spans, ids and folded names."""

from __future__ import annotations

import pytest

from crawl_assets.enrich.entities import Entities, find_entities
from crawl_assets.normalize.text import clean_text
from crawl_assets_tests.enrich.planted import entity_sentences
from crawl_assets_tests.enrich.records import record, table


def _found(text: str) -> list[tuple[str, str, str, str]]:
    clean = clean_text(text)
    out = []
    for e in find_entities(clean):
        assert clean[e["start"]:e["end"]] == e["text"], "spans are code points of text_clean"
        out.append((e["text"], e["type"], e["id"], e["method"]))
    return out


@pytest.mark.parametrize("text, expected", [
    ("Dr. Sarah Connor met the United Nations team in Tehran.",
     [("Sarah Connor", "PER", "per:sarah_connor", "title"), ("United Nations", "ORG", "org:un", "gazetteer"),
      ("Tehran", "LOC", "loc:tehran", "gazetteer")]),
    ("آقای علی رضایی از دانشگاه تهران در شهر رشت گفت", [
        ("علی رضایی", "PER", "per:علی_رضایی", "title"), ("دانشگاه تهران", "ORG", "org:tehran_university", "gazetteer"),
        ("رشت", "LOC", "loc:rasht", "head")]),
    ("قال الدكتور خالد العمري إن وزارة الصحة في العراق والسعودية تعاونت", [
        ("خالد العمری", "PER", "per:خالد_العمری", "title"), ("وزارة الصحة", "ORG", "org:وزارة_الصحة", "head"),
        ("العراق", "LOC", "loc:iraq", "gazetteer"), ("السعودیة", "LOC", "loc:saudi_arabia", "gazetteer")]),
    ("Acme Corp opened on Fifth Avenue; Kerman Province too. Mary Jones told us.", [
        ("Acme Corp", "ORG", "org:acme_corp", "suffix"), ("Fifth Avenue", "LOC", "loc:fifth_avenue", "suffix"),
        ("Kerman Province", "LOC", "loc:kerman_province", "suffix"), ("Mary Jones", "PER", "per:mary_jones", "given_name")]),
    ("Helen Park said prices rose at the University of Toronto", [
        ("Helen Park", "PER", "per:helen_park", "said"),
        ("University of Toronto", "ORG", "org:university_of_toronto", "head")]),
    ("کارمندان سازمان ملل متحد و بی‌بی‌سی در خیابان ولیعصر", [
        ("سازمان ملل متحد", "ORG", "org:un", "gazetteer"), ("بی‌بی‌سی", "ORG", "org:bbc", "gazetteer"),
        ("خیابان ولیعصر", "LOC", "loc:خیابان_ولیعصر", "head")]),
])
def test_each_rule_finds_its_entities(text, expected):
    assert _found(text) == expected


@pytest.mark.parametrize("text", [
    "who cares about apple prices at the market today",  # not WHO, not Apple
    "شکرا على الخدمة الرائعة",  # على folds like the name علی: no name in Arabic text
    "هوا امروز خیلی سرد است و برف می‌بارد.",
    "the new update is great, thanks",
])
def test_common_words_are_no_entities(text):
    assert _found(text) == []


def test_planted_sentences_per_language():
    stats: dict[str, list[int]] = {}
    for lang, text, gold in entity_sentences(24):
        found = {(e["start"], e["end"], e["type"]) for e in find_entities(text)}
        st = stats.setdefault(lang, [0, 0, 0])
        st[0] += len(found & set(gold))
        st[1] += len(found - set(gold))
        st[2] += len(set(gold) - found)
    for lang, (tp, fp, fn) in stats.items():
        f1 = 2 * tp / (2 * tp + fp + fn)
        assert f1 >= 0.75, (lang, tp, fp, fn)
        assert fn > 0, "the set plants names no rule can find (the figures must not be perfect by construction)"


def test_rows_and_documents_carry_spans_ids_and_names():
    enricher = Entities()
    rows = enricher.extract(table([record("x:1", "Dr. Sarah Connor landed in Tehran"), record("x:2", "nothing here"),
                                   record("x:3", "سفر به تهران و مشهد")]))
    assert rows.column("key").to_pylist() == ["x:1", "x:3"]
    assert rows.column("ids").to_pylist() == [["per:sarah_connor", "loc:tehran"], ["loc:tehran", "loc:mashhad"]]
    assert rows.column("names").to_pylist()[0] == ["sarah connor", "tehran"]
    doc = next(enricher.documents("part", rows, None))
    assert doc["key"] == "entities:x:1" and doc["record_key"] == "x:1" and doc["inferred"] is True
    assert doc["entities"]["types"] == ["LOC", "PER"] and doc["entities"]["count"] == 2
    assert doc["entities"]["spans"][1] == {"id": "loc:tehran", "type": "LOC", "text": "Tehran", "start": 27,
                                           "end": 33, "method": "gazetteer", "field": "text_clean"}
    only_places = Entities(types=["LOC"]).extract(table([record("x:1", "Dr. Sarah Connor landed in Tehran")]))
    assert only_places.column("ids").to_pylist() == [["loc:tehran"]]
    with pytest.raises(ValueError, match="types"):
        Entities(types=["GPE"])
