"""``text_lemma``: the lemmas of a record's text as the records index holds them (docs/SCHEMA.md, "Word forms").

Written by us, not by an analyzer (Elasticsearch's ``persian_stem`` does not reach verbs, possessives or
colloquial forms). It is indexed but kept out of ``_source`` by the template, so every writer of records
adds it: the bulk sink (dicts, and rows from Arrow in ``arrow_documents``) and ``es reindex``'s copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from crawl_assets.persian.lemma import lemma_text

FIELD = "text_lemma"
LEMMA_META = "text_lemma_version"  # the records mapping's _meta key naming the lemmatizer of its documents


def lemmas_of(text_clean: Any, text: Any, lang: Any) -> str | None:
    """A record's ``text_lemma`` from its fields (``text_clean``, else ``text``; Arabic stems when ``lang`` is
    ``ar``); None when it has no text."""
    chosen = text_clean or text
    return lemma_text(chosen, lang) if isinstance(chosen, str) and chosen else None


def with_lemmas(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """The record with ``text_lemma`` (``lemmas_of``), as the bulk sink sends it."""
    lemmas = lemmas_of(doc.get("text_clean"), doc.get("text"), doc.get("lang"))
    return doc if lemmas is None else {**doc, FIELD: lemmas}


def without_lemmas(source: bytes) -> bytes:
    """A document's JSON as it was given to the sink (a dead letter keeps the caller's document, not ours)."""
    if b'"text_lemma"' not in source:
        return source
    doc = orjson.loads(source)
    doc.pop(FIELD, None)
    return orjson.dumps(doc)


def lemma_of(item: str, what: str, lang: str | None = None) -> str:
    """The lemma a word or hashtag is counted under (a hashtag's words joined by ``_`` again)."""
    if what == "hashtags":
        return "_".join(lemma_text(part, lang) or part for part in item.split("_"))
    return lemma_text(item, lang) or item


def group_forms(items: list[str], what: str, lang: str | None = None) -> dict[str, list[str]]:
    """Lemma -> its forms among ``items``, in the items' order (the first lemma seen first)."""
    groups: dict[str, list[str]] = {}
    for item in items:
        groups.setdefault(lemma_of(item, what, lang), []).append(item)
    return groups
