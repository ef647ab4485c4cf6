"""Entities: people, organizations and places named in a record's text (Persian, Arabic, English), with spans.

Method (rules as data in ``entity_rules.py``, the gazetteer in ``gazetteer/entities.tsv``), over
``text_clean`` cut into words (runs of letters, digits, ``_`` and ZWNJ), left to right, the first rule that
matches at a word wins and the words it takes are not read again:

1. ``gazetteer``: the longest sequence of adjacent words (up to the longest name) that is a gazetteer name
   (countries, major cities, international and well-known organizations, in three languages), compared
   folded (letter forms, case, ZWNJ); a Latin-script name only when each word is Capitalized (an acronym:
   exactly as written), so "apple" or "who" are no entity. An Arabic word may carry a one-letter proclitic
   (و ب ل ف: والعراق).
2. ``title``: a title (Dr, Mr, آقای, دکتر, الدكتور, ...) followed by a name: in Latin script up to three
   Capitalized words, in Arabic script one word, two when the first is a known given name; a person.
3. ``head``: a head noun and the word after it: an organization (University of X, دانشگاه X, وزارة X; the
   head is part of the name) or a place (شهر X, مدينة X: only X, except for streets, squares, seas, rivers and
   mountains, whose head is part of the name).
4. ``suffix``: Capitalized words ending with an organization suffix (Acme Corp, Saderat Bank) or a place
   suffix (Fifth Avenue, Tabriz Province).
5. ``given_name``: a known given name and, when there is one, the family name after it (Capitalized in Latin
   script; not a function word in Arabic script); a person.
6. ``said``: two Capitalized words followed by said / told / wrote ...; a person.

In a text that reads as Arabic (ة أ إ ؤ, and none of پ چ ژ گ), a given name that folds like an Arabic
function word (على and علي both fold to علی) is not read as a name without a title. A name words of a cue run into never crosses punctuation or a function word (``NAME_STOPS``). Each entity
has an ``id``: the gazetteer's (``loc:tehran``) or its type and folded name (``per:sara_rahimi``), the same
for every spelling the rules fold together; ``names`` holds the folded names for the API's ``entity=``.

Limits: no trained model (the rules are what we could verify on our own written set; docs/ENRICHMENT.md has
the per-language figures); a person without a title, given name or reporting verb is missed, and a name that
is also a common word is found only where a rule sees it (Persian has no capitals).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, ClassVar

import pyarrow as pa

from crawl_assets.enrich import entity_rules as rules
from crawl_assets.enrich.base import CombineContext, Enricher, record_feature
from crawl_assets.enrich.columns import CONTEXT_COLUMNS, CONTEXT_FIELDS, context, record_documents

_TOKEN = re.compile(r"[\w\u200c]+")
_LATIN = re.compile(r"[A-Za-z]")
_ARABIC_SCRIPT = re.compile(r"[\u0600-\u06ff]")
_PROCLITICS = "وبلف"
_ARABIC_ONLY = re.compile(r"[ةأإؤ]")  # letters Persian text rarely holds
_PERSIAN_ONLY = re.compile(r"[پچژگ]")
MENTION = pa.struct([pa.field("id", pa.string()), pa.field("type", pa.string()), pa.field("text", pa.string()),
                     pa.field("start", pa.int32()), pa.field("end", pa.int32()), pa.field("method", pa.string())])


class _Words:
    """The words of one text: surface, folded form, code-point span, and whether each is adjacent to the next
    (only spaces between them; after a title, a full stop too)."""

    def __init__(self, text: str) -> None:
        self.text = text
        found = list(_TOKEN.finditer(text))
        self.surface = [m.group() for m in found]
        self.start = [m.start() for m in found]
        self.end = [m.end() for m in found]
        self.folded = [w.casefold().replace("\u200c", "") for w in self.surface]  # (text_clean's letters already)
        self.gap = [text[self.end[i]:self.start[i + 1]] for i in range(len(found) - 1)]
        self.arabic = False  # the text reads as Arabic: folded words that are Arabic function words are no names

    def __len__(self) -> int:
        return len(self.surface)

    def adjacent(self, i: int, dot: bool = False) -> bool:
        """Whether word ``i + 1`` follows word ``i`` with only spaces between (``dot``: a full stop allowed)."""
        if i + 1 >= len(self.surface):
            return False
        gap = self.gap[i]
        return bool(gap) and (gap.isspace() or (dot and gap[0] == "." and (len(gap) == 1 or gap[1:].isspace())))

    def capitalized(self, i: int) -> bool:
        word = self.surface[i]
        return bool(_LATIN.match(word)) and word[0].isupper() and self.folded[i] not in rules.NAME_STOPS

    def arabic_name_word(self, i: int) -> bool:
        word = self.folded[i]
        if self.arabic and word in rules.ARABIC_FUNCTION_FOLDS:
            return False
        return bool(_ARABIC_SCRIPT.match(word)) and word not in rules.NAME_STOPS and not word.isdigit()


def find_entities(text: str) -> list[dict[str, Any]]:
    """The entities of one text (``text_clean``), in order: id, type, text, start, end (code points), method."""
    words = _Words(text)
    words.arabic = bool(_ARABIC_ONLY.search(text)) and not _PERSIAN_ONLY.search(text)
    gazetteer, longest = rules.gazetteer(), rules.longest_name()
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(words):
        found = (_gazetteer(words, i, gazetteer, longest) or _title(words, i) or _head(words, i) or
                 _suffix(words, i) or _given_name(words, i) or _said(words, i))
        if found is None:
            i += 1
            continue
        kind, first, last, method, start_shift = found
        key = tuple(words.folded[first:last + 1])
        if start_shift:
            key = (key[0][start_shift:], *key[1:])
        entry = gazetteer.get(key)
        entity_id = entry.id if entry is not None and entry.type == kind else f"{kind.lower()}:{'_'.join(key)}"
        start = words.start[first] + start_shift
        out.append({"id": entity_id, "type": kind, "text": text[start:words.end[last]], "start": start,
                    "end": words.end[last], "method": method})
        i = max(last + 1, i + 1)
    return out


Found = tuple[str, int, int, str, int]  # type, first word, last word, method, characters cut from the first word


def _run(words: _Words, i: int, n: int) -> bool:
    return all(words.adjacent(j) for j in range(i, i + n - 1)) and i + n <= len(words)


def _gazetteer(words: _Words, i: int, gazetteer: dict, longest: int) -> Found | None:
    first, starts = words.folded[i], rules.first_words()
    if first not in starts and not (first[:1] in _PROCLITICS and first[1:] in starts):
        return None
    for n in range(min(longest, len(words) - i), 0, -1):
        if not _run(words, i, n):
            continue
        key = tuple(words.folded[i:i + n])
        shifts = [0]
        if _ARABIC_SCRIPT.match(key[0]) and key[0][0] in _PROCLITICS and len(key[0]) > 3:
            shifts.append(1)
        for shift in shifts:
            entry = gazetteer.get((key[0][shift:], *key[1:]) if shift else key)
            if entry is None:
                continue
            if entry.latin and not all(_latin_matches(words.surface[j], part) for j, part in
                                       zip(range(i, i + n), entry.name.split())):
                continue
            if entry.latin and words.adjacent(i + n - 1) and words.capitalized(i + n) and \
                    words.folded[i + n] in rules.PLACE_SUFFIXES | rules.ORG_SUFFIXES:
                return None  # Kerman Province: the suffix rule takes the longer name
            return entry.type, i, i + n - 1, "gazetteer", shift
    return None


def _latin_matches(surface: str, written: str) -> bool:
    if written.isupper() and len(written) > 1:
        return surface == written
    return surface[:1].isupper()


def _title(words: _Words, i: int) -> Found | None:
    word = words.folded[i]
    if word in rules.PERSON_TITLES["en"] and words.surface[i][:1].isupper():
        last = i
        while last - i < 3 and words.adjacent(last, dot=last == i) and words.capitalized(last + 1):
            last += 1
        return ("PER", i + 1, last, "title", 0) if last > i else None
    if word in rules.PERSON_TITLES["fa"] or word in rules.PERSON_TITLES["ar"]:
        if not (words.adjacent(i) and words.arabic_name_word(i + 1)):
            return None
        last = i + 1
        if words.folded[last] in rules.GIVEN_NAMES["fa"] | rules.GIVEN_NAMES["ar"] and words.adjacent(last) \
                and words.arabic_name_word(last + 1):
            last += 1
        return "PER", i + 1, last, "title", 0
    return None


def _head(words: _Words, i: int) -> Found | None:
    word = words.folded[i]
    if words.surface[i][:1].isupper() and word in rules.ORG_HEADS["en"]:
        # University of Tehran, Ministry of Health
        if words.adjacent(i) and words.folded[i + 1] == "of" and words.adjacent(i + 1) and words.capitalized(i + 2):
            last = i + 2
            while last - i < 4 and words.adjacent(last) and words.capitalized(last + 1):
                last += 1
            return "ORG", i, last, "head", 0
        return None
    for kind, heads in (("ORG", rules.ORG_HEADS), ("LOC", rules.PLACE_HEADS)):
        if word in heads["fa"] or word in heads["ar"]:
            if not (words.adjacent(i) and words.arabic_name_word(i + 1)):
                return None
            first = i if kind == "ORG" or word in rules.KEEP_HEAD else i + 1
            return kind, first, i + 1, "head", 0
    return None


def _suffix(words: _Words, i: int) -> Found | None:
    if not words.capitalized(i) or words.folded[i] in rules.PERSON_TITLES["en"]:
        return None
    last = i
    while last - i < 4 and words.adjacent(last) and words.capitalized(last + 1):
        last += 1
        if words.folded[last] in rules.ORG_SUFFIXES:
            return "ORG", i, last, "suffix", 0
        if words.folded[last] in rules.PLACE_SUFFIXES:
            return "LOC", i, last, "suffix", 0
    return None


def _given_name(words: _Words, i: int) -> Found | None:
    word = words.folded[i]
    if words.capitalized(i) and word in rules.GIVEN_NAMES["en"]:
        if words.adjacent(i) and words.capitalized(i + 1):
            return "PER", i, i + 1, "given_name", 0
        return "PER", i, i, "given_name", 0
    if word in rules.GIVEN_NAMES["fa"] or word in rules.GIVEN_NAMES["ar"]:
        if not words.arabic_name_word(i):
            return None
        if words.adjacent(i) and words.arabic_name_word(i + 1):
            return "PER", i, i + 1, "given_name", 0
        return "PER", i, i, "given_name", 0
    return None


def _said(words: _Words, i: int) -> Found | None:
    if words.capitalized(i) and words.adjacent(i) and words.capitalized(i + 1) and words.adjacent(i + 1) \
            and words.folded[i + 2] in rules.SAID:
        return "PER", i, i + 1, "said", 0
    return None


def entity_names(entities: list[dict[str, Any]]) -> list[str]:
    """The folded names of ``entities`` (what ``entity=`` matches besides ids), distinct, in order."""
    return list(dict.fromkeys(" ".join(rules.fold(w) for w in e["text"].split()) for e in entities))


class Entities(Enricher):
    name: ClassVar[str] = "entities"
    version: ClassVar[str] = "1"
    columns: ClassVar[tuple[str, ...]] = (*CONTEXT_COLUMNS, "text_clean")
    description: ClassVar[str] = "People, organizations and places named in the text (Persian, Arabic, English): " \
                                 "gazetteer, titles, head nouns and suffixes, given names; spans over text_clean."

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {"types": list(rules.TYPES)}

    def validate(self) -> None:
        types = self.params["types"]
        if not (isinstance(types, list) and types and set(types) <= set(rules.TYPES)):
            raise ValueError(f"entities: 'types' must be a non-empty list of {', '.join(rules.TYPES)}")

    def model_files(self) -> list:
        return [rules.GAZETTEER]  # the gazetteer is data: a changed entry is a new stamp

    @property
    def part_schema(self) -> pa.Schema:
        return self.stamped_schema([*CONTEXT_FIELDS, pa.field("entities", pa.list_(MENTION)),
                                    pa.field("ids", pa.list_(pa.string())), pa.field("names", pa.list_(pa.string())),
                                    pa.field("types", pa.list_(pa.string()))])

    def extract(self, records: pa.Table) -> pa.Table:
        wanted = set(self.params["types"])
        rows, found = [], []
        for i, text in enumerate(records.column("text_clean").to_pylist()):
            mentions = [e for e in find_entities(text or "") if e["type"] in wanted]
            if mentions:
                rows.append(i)
                found.append(mentions)
        return self.table(self.part_schema, {
            **context(records, rows), "entities": pa.array(found, pa.list_(MENTION)),
            "ids": [list(dict.fromkeys(e["id"] for e in m)) for m in found],
            "names": [entity_names(m) for m in found],
            "types": [sorted({e["type"] for e in m}) for m in found]})

    def documents(self, table: str, rows: pa.Table, context: CombineContext | None) -> Iterator[dict[str, Any]]:
        for ref, payload in record_documents(rows, ("entities", "ids", "names", "types")):
            mentions = payload.pop("entities")
            yield record_feature(self, ref, entities={**payload, "count": len(mentions),
                                                      "spans": [{**m, "field": "text_clean"} for m in mentions]})
