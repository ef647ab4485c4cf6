"""Compose the labelled sentiment sets from the phrase banks (``sentiment_phrases.py``) and write them beside
this file:

    python -m crawl_assets.enrich.models.make_sentiment_set

* ``sentiment_eval.tsv``: up to 600 distinct short texts per language (fa, ar, en; 558 with today's banks,
  whose sarcasm and neutral compositions run out), from the odd half of every bank;
* ``sentiment_train.tsv``: as many per language from the even half (never an evaluation phrase).

Columns: ``label`` (positive, negative, neutral), ``lang``, ``kind`` (what the text exercises: ``plain``,
``negation``, ``sarcasm``, ``emoji``, ``neutral``), ``text``. Labels follow the composition: a positive
predicate is positive; a negated positive or a negative predicate is negative; a negated negative ("not bad
at all", "doesn't crash anymore") is positive; sarcasm (praise around a complaint, with its markers) is
negative; an emoji that disagrees with nothing adds its polarity to a neutral statement (``emoji``); a
statement or question about an aspect is neutral. Deterministic (seeded).
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

from crawl_assets.enrich.models.sentiment_phrases import BANKS

HERE = Path(__file__).parent
PER_LANGUAGE = 600
# share of each kind among a language's texts (sums to 1)
MIX = (("plain", 0.3), ("negation", 0.2), ("sarcasm", 0.15), ("emoji", 0.15), ("neutral", 0.2))


def _half(items: list[str], split: str) -> list[str]:
    return items[0::2] if split == "train" else items[1::2]


def _join(lang: str, aspect: str, predicate: str) -> str:
    if lang == "en":
        text = f"{aspect} {predicate}"
        return text[0].upper() + text[1:]
    return f"{aspect} {predicate}"


def compose(lang: str, split: str, n: int, seed: int) -> list[tuple[str, str, str, str]]:
    """``n`` distinct (label, lang, kind, text) of one language from one half of its banks."""
    banks = {name: _half(items, split) for name, items in BANKS[lang].items()}
    rng = random.Random(f"{seed}-{lang}-{split}")
    out: dict[str, tuple[str, str, str, str]] = {}
    targets = [(kind, round(share * n)) for kind, share in MIX]
    for kind, count in targets:
        made = 0
        for _ in range(count * 50):
            if made >= count:
                break
            aspect = rng.choice(banks["aspect"])
            if kind == "plain":
                label = rng.choice(["positive", "negative"])
                text = _join(lang, aspect, rng.choice(banks[label]))
                if rng.random() < 0.3:
                    text += rng.choice(["!", ".", "!!"])
            elif kind == "negation":
                flipped = rng.choice(["not_positive", "not_negative"])
                label = "negative" if flipped == "not_positive" else "positive"
                text = _join(lang, aspect, rng.choice(banks[flipped]))
            elif kind == "sarcasm":
                label = "negative"
                text = rng.choice(banks["sarcasm"]).format(a=aspect)
            elif kind == "emoji":
                label = rng.choice(["positive", "negative"])
                emoji = rng.choice(banks["pos_emoji" if label == "positive" else "neg_emoji"])
                if rng.random() < 0.5:  # an emoji beside a statement that says nothing by itself
                    text = f"{rng.choice(banks['neutral']).format(a=aspect)} {emoji}"
                else:  # an emoji that agrees with the words
                    text = f"{_join(lang, aspect, rng.choice(banks[label]))} {emoji}{emoji if rng.random() < 0.3 else ''}"
            else:
                label = "neutral"
                text = rng.choice(banks["neutral"]).format(a=aspect)
                text = text[0].upper() + text[1:] if lang == "en" else text
            if text not in out:
                out[text] = (label, lang, kind, text)
                made += 1
    rows = list(out.values())
    rng.shuffle(rows)
    return rows


def write(path: Path, rows: list[tuple[str, str, str, str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\", lineterminator="\n")
        writer.writerow(["label", "lang", "kind", "text"])
        writer.writerows(rows)


def main() -> None:
    for split, seed in (("train", 11), ("eval", 35)):
        rows = [row for lang in ("fa", "ar", "en") for row in compose(lang, split, PER_LANGUAGE, seed)]
        write(HERE / f"sentiment_{split}.tsv", rows)
        print(f"sentiment_{split}.tsv: {len(rows)} texts")


if __name__ == "__main__":
    main()
