"""Finglish (Persian in Latin letters) is Persian written in Latin letters: ``lang: fa`` with ``metadata.script:
Latn``, told apart from English and the other Latin-script languages (the whole sets: bench/lang_eval.py)."""

from __future__ import annotations

from crawl_assets.normalize.lang import is_finglish, with_script
from crawl_assets.normalize.lang import detect_lang
from crawl_assets_tests.normalize.lang_eval import load_finglish


def test_a_fifth_of_the_finglish_lines_meets_the_goal() -> None:
    samples = load_finglish()[::5]
    answers = [detect_lang(s.text) for s in samples]
    hits = sum(a == "fa" and s.expected == "fa" for s, a in zip(samples, answers))
    precision = hits / max(1, sum(a == "fa" for a in answers))
    recall = hits / sum(s.expected == "fa" for s in samples)
    assert 2 * precision * recall / (precision + recall) >= 0.9, (precision, recall)


def test_finglish_and_its_look_alikes() -> None:
    assert detect_lang("salam 😊 chetori?") == "fa" and detect_lang("nemidunam chi begam") == "fa"
    assert detect_lang("merci beaucoup") == "fr" and detect_lang("Chambre sale") != "fa"
    assert not is_finglish("to be or not to be") and not is_finglish("Kindle Paperwhite on sale")


def test_the_record_says_which_script() -> None:
    assert with_script("fa", "mikham beram khune", {}) == ("fa", {"script": "Latn"})
    assert with_script("en", "mikham beram khune", {"x": 1}) == ("fa", {"x": 1, "script": "Latn",
                                                                        "platform_lang": "en"})
    assert with_script("fa", "می‌خواهم بروم", {}) == ("fa", {})
    assert with_script("en", "I want to go home", {}) == ("en", {})
