"""``text_lemma``: the lemmas of a record's text as the records index holds them (docs/SCHEMA.md, "Word forms").

Written by us, not by an analyzer (bench/persian_search_eval.py decided it: Elasticsearch's ``persian_stem``
does not reach verbs, possessives or colloquial forms). It is indexed but kept out of ``_source`` by the
template, so every writer of records adds it: the bulk sink, and ``es reindex``'s copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crawl_assets.normalize.persian_lemma import lemma_text

FIELD = "text_lemma"


def with_lemmas(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """The record with ``text_lemma`` (from ``text_clean``, else ``text``; Arabic stems when ``lang`` is ``ar``)."""
    text = doc.get("text_clean") or doc.get("text")
    if not isinstance(text, str) or not text:
        return doc
    return {**doc, FIELD: lemma_text(text, doc.get("lang"))}
