"""Places: the countries, regions and cities a record's text (and its author's profile fields, where the platform
gives them) names, as gazetteer ids with a confidence. Inferred from names only: never from coordinates.

Per record (``extract``, one row per record with at least one place): ``place_ids`` (distinct, the most
confident first), ``countries`` (of those places), and ``mentions`` (place, kind, country, field, start/end in
code points of ``text_clean`` or of the profile field, confidence, the rule that decided). The gazetteer
(``gazetteer.py``) names every place in Persian, Arabic and English; its point is the place's own (a city's, a
region's seat, a country's capital): a feature never holds a person's position.

Matching and disambiguation (docs/ENRICHMENT.md, *Places*), in order:

1. Text is folded (``gazetteer.fold``) and cut into words; at each word the longest gazetteer name (up to
   ``max_words`` words) is taken; in Arabic script a leading clitic (و ف ب ل ک, and لل for ال) is tried off
   when the whole word is no name. A one-word Latin name counts only capitalized (``Shiraz`` yes, ``shiraz`` no).
2. A name flagged *cue* (every ISO 3166-2 region name of ``pycountry``, a few table names that are also words:
   فارس, البرز) counts only beside a cue word (``استان``, ``province``, ``محافظة``, ``state of`` ...).
3. A short Arabic-script city name of the package (``WEAK_LETTERS`` letters at most, under a million inhabitants:
   خبر, سالم, نیم, گاو are words first) counts only after a city cue or beside a mention of its country.
4. Candidates of one name: a region cue keeps regions, a city cue (``شهر``, ``city of``) keeps cities; then those
   whose country another mention of the same record names (``context``); then a country over a city of the same
   name; then the most populous city, its confidence scaled by its share of the candidates' population
   (``population``).
5. Confidence by kind (country 0.95, region 0.9, city 0.9 from a million people, else 0.8), +0.05 for a
   cue or context (at most 0.97), times the population share when that decided; mentions under
   ``min_confidence`` are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pyarrow as pa

from crawl_assets.enrich.base import CombineContext, Enricher, record_feature
from crawl_assets.enrich.columns import CONTEXT_COLUMNS, CONTEXT_FIELDS, context, record_documents
from crawl_assets.enrich.gazetteer import (CITY_CUES_BEFORE, REGION_CUES_AFTER, REGION_CUES_BEFORE, Alias, Gazetteer,
                                           Place, fold, load)

MENTION = pa.struct([pa.field("place_id", pa.string()), pa.field("kind", pa.string()),
                     pa.field("country", pa.string()), pa.field("field", pa.string()),
                     pa.field("start", pa.int32()), pa.field("end", pa.int32()),
                     pa.field("confidence", pa.float32()), pa.field("rule", pa.string())])
# Author profile fields a record may carry in ``metadata`` (where its platform gives them): free text only; a
# coordinate pair anywhere in a record is never read.
PROFILE_FIELDS = ("author_location", "user_location", "author_description")
_TOKEN = re.compile(r"[^\W_]+")
_CLITICS = ("و", "ف", "ب", "ل", "ک")
BASE = {"country": 0.95, "region": 0.9, "city": 0.8}
BIG_CITY = 1_000_000


class PlaceMentions(Enricher):
    name: ClassVar[str] = "places"
    version: ClassVar[str] = "1"
    columns: ClassVar[tuple[str, ...]] = (*CONTEXT_COLUMNS, "text_clean", "metadata")
    description: ClassVar[str] = ("Countries, regions and cities named in text and profile fields (fa, ar, en), "
                                  "as gazetteer ids with confidence; never from coordinates.")

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {"min_confidence": 0.5, "min_city_population": 100_000}

    def validate(self) -> None:
        p = self.params
        if not (isinstance(p["min_confidence"], (int, float)) and 0 <= p["min_confidence"] <= 1):
            raise ValueError("places: 'min_confidence' must be a number from 0 to 1")
        if p["min_city_population"] not in (15_000, 50_000, 100_000, 250_000, 500_000, 1_000_000):
            raise ValueError("places: 'min_city_population' must be one of 15000, 50000, 100000, 250000, 500000, "
                             "1000000")

    def hashed_params(self) -> dict[str, Any]:
        from crawl_assets.enrich.gazetteer import package_versions

        return {**self.params, "gazetteer": package_versions()}

    def model_files(self) -> list[Path]:
        """The gazetteer's written table is data like a model's: part of the stamp, like the packages' versions."""
        from crawl_assets.enrich import gazetteer

        return [gazetteer.TABLE]

    @property
    def gazetteer(self) -> Gazetteer:
        return load(self.params["min_city_population"])

    @property
    def part_schema(self) -> pa.Schema:
        return self.stamped_schema([*CONTEXT_FIELDS, pa.field("place_ids", pa.list_(pa.string())),
                                    pa.field("countries", pa.list_(pa.string())),
                                    pa.field("mentions", pa.list_(MENTION))])

    def extract(self, records: pa.Table) -> pa.Table:
        texts = records.column("text_clean").to_pylist()
        metas = records.column("metadata").to_pylist() if "metadata" in records.column_names else [None] * len(texts)
        hits: list[int] = []
        ids, countries, mentions = [], [], []
        for i, (text, meta) in enumerate(zip(texts, metas)):
            found = self.find(text or "", "text")
            for name, value in _profile_fields(meta):
                found += self.find(value, name)
            if not found:
                continue
            best: dict[str, float] = {}
            for m in found:
                best[m["place_id"]] = max(best.get(m["place_id"], 0.0), m["confidence"])
            order = sorted(best, key=lambda p: (-best[p], p))
            hits.append(i)
            ids.append(order)
            countries.append(list(dict.fromkeys(self.gazetteer.places[p].country for p in order)))
            mentions.append(found)
        return self.table(self.part_schema, {**context(records, hits), "place_ids": ids, "countries": countries,
                                             "mentions": pa.array(mentions, pa.list_(MENTION))})

    # -- matching ---------------------------------------------------------------------------------------
    def find(self, text: str, field: str = "text") -> list[dict[str, Any]]:
        """The place mentions of one text (``text_clean`` or a profile field), in text order."""
        if not text:
            return []
        from crawl_assets.normalize.text import clean_text

        if field != "text":
            text = clean_text(text)
        gaz = self.gazetteer
        folded = fold(text)
        words = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(folded)]
        raw: list[tuple[int, int, list[Alias], int, int]] = []  # (start, end, aliases, first word, last word)
        i = 0
        while i < len(words):
            got = _longest(gaz, words, i, text)
            if got is None:
                i += 1
                continue
            start, end, aliases, last = got
            raw.append((start, end, aliases, i, last))
            i = last + 1
        if not raw:
            return []
        tokens = [w for _, _, w in words]
        resolved = []
        for start, end, aliases, first, last in raw:
            before, after = tokens[max(0, first - 2):first], tokens[last + 1:last + 3]
            region_cue = _cue(before, after, REGION_CUES_BEFORE, REGION_CUES_AFTER)
            city_cue = _cue(before, [], CITY_CUES_BEFORE[:3], ())
            places = [gaz.places[a.place] for a in aliases if not a.cue or region_cue]
            weak = {a.place for a in aliases if a.weak and not city_cue}
            resolved.append((start, end, places, weak, region_cue, city_cue))
        # countries named for sure (one candidate, or only countries; weak names aside) are the others' context
        strong = [[x for x in p if x.id not in weak] for _, _, p, weak, _, _ in resolved]
        named = {p[0].country for p in strong if p and len({x.country for x in p}) == 1}
        out = []
        for start, end, places, weak, region_cue, city_cue in resolved:
            places = [p for p in places if p.id not in weak or p.country in named]
            got = _decide(places, region_cue, city_cue, named)
            if got is None:
                continue
            place, confidence, rule = got
            if confidence < self.params["min_confidence"]:
                continue
            out.append({"place_id": place.id, "kind": place.kind, "country": place.country, "field": field,
                        "start": start, "end": end, "confidence": round(confidence, 3), "rule": rule})
        return out

    # -- index ------------------------------------------------------------------------------------------
    def documents(self, table: str, rows: pa.Table, context: CombineContext | None) -> Iterator[dict[str, Any]]:
        for ref, payload in record_documents(rows, ("place_ids", "countries", "mentions")):
            kinds = sorted({m["kind"] for m in payload["mentions"]})
            yield record_feature(self, ref, places={"ids": payload["place_ids"], "countries": payload["countries"],
                                                    "kinds": kinds, "mentions": payload["mentions"]})


def _profile_fields(meta: Any) -> Iterator[tuple[str, str]]:
    """Free-text profile fields of a record's ``metadata`` (a JSON object, or its text)."""
    if not meta:
        return
    if isinstance(meta, (str, bytes)):
        try:
            meta = orjson.loads(meta)
        except orjson.JSONDecodeError:
            return
    if not isinstance(meta, dict):
        return
    for name in PROFILE_FIELDS:
        value = meta.get(name)
        if isinstance(value, str) and value.strip():
            yield name, value[:500]


def _longest(gaz: Gazetteer, words: list[tuple[int, int, str]], i: int,
             text: str) -> tuple[int, int, list[Alias], int] | None:
    """The longest gazetteer name starting at word ``i`` (a clitic off the first word in Arabic script):
    (start, end, its aliases, index of its last word)."""
    first_start, first_end, first = words[i]
    heads = [(skip, head) for skip, head in _heads(first) if head in gaz.first_words]
    if not heads:
        return None
    for n in range(min(gaz.max_words, len(words) - i), 0, -1):
        tail = " ".join(w for _, _, w in words[i + 1:i + n])
        for skip, head in heads:
            key = f"{head} {tail}" if tail else head
            aliases = gaz.aliases.get(key)
            if not aliases:
                continue
            start = first_start + skip
            end = words[i + n - 1][1]
            if n == 1 and any(a.cased for a in aliases) and not text[start:start + 1].isupper():
                aliases = [a for a in aliases if not a.cased]
                if not aliases:
                    continue
            return start, end, aliases, i + n - 1
    return None


def _heads(word: str) -> Iterator[tuple[int, str]]:
    yield 0, word
    if word[:1].isascii() or len(word) < 4:
        return
    if word.startswith("لل"):
        yield 1, "ا" + word[1:]  # لل + name = ل + ال + name
    if word.startswith("ال") and len(word) >= 6:
        yield 2, word[2:]  # the Arabic article before a name the gazetteer holds without it
    for clitic in _CLITICS:
        if word.startswith(clitic) and len(word) - len(clitic) >= 3:
            yield len(clitic), word[len(clitic):]
            if word[len(clitic):].startswith(("ب", "ل")) and len(word) - len(clitic) - 1 >= 3:
                yield len(clitic) + 1, word[len(clitic) + 1:]


def _cue(before: list[str], after: list[str], cues_before: tuple[tuple[str, ...], ...],
         cues_after: tuple[tuple[str, ...], ...]) -> bool:
    return any(tuple(before[-len(c):]) == c for c in cues_before if len(before) >= len(c)) or \
        any(tuple(after[:len(c)]) == c for c in cues_after if len(after) >= len(c))


def _decide(places: list[Place], region_cue: bool, city_cue: bool,
            named: set[str]) -> tuple[Place, float, str] | None:
    """The place a name means among ``places`` (see the module docstring), its confidence and the rule."""
    if not places:
        return None
    rule = "unique"
    bonus = 0.0
    if len(places) > 1 and region_cue and any(p.kind == "region" for p in places):
        places, rule, bonus = [p for p in places if p.kind == "region"], "cue", 0.05
    elif len(places) > 1 and city_cue and any(p.kind == "city" for p in places):
        places, rule, bonus = [p for p in places if p.kind == "city"], "cue", 0.05
    elif region_cue and places[0].kind == "region":
        rule, bonus = "cue", 0.05
    if len(places) > 1:
        near = [p for p in places if p.country in named]
        if near and len(near) < len(places):
            places, rule, bonus = near, "context", 0.05
    if len(places) > 1 and any(p.kind == "country" for p in places):
        places, rule = [p for p in places if p.kind == "country"], "country_over_city"
    share = 1.0
    if len(places) > 1:
        total = sum(max(p.population, 1) for p in places)
        places = sorted(places, key=lambda p: (-p.population, p.id))
        share = max(places[0].population, 1) / total
        rule = "population"
    place = places[0]
    base = BASE[place.kind] + (0.1 if place.kind == "city" and place.population >= BIG_CITY else 0.0)
    if rule in ("unique", "cue", "context") and place.country in named and place.kind != "country":
        bonus = 0.05
    return place, min(base + bonus, 0.97) * share, rule
