"""Pure: cut an erased person out of one raw JSON value, whatever its format.

A raw line may hold several people's items (an X page holds many posts and their authors in
``includes``; an Intercom conversation holds every participant's parts and its ``contacts``), so the line
is kept and only what belongs to the person is cut out, as the platform's ``PersonIds`` describes it
(``crawl_assets.normalize.persons``, declared beside each normalizer):

- an object whose own id is one of the person's erased items (``id``, ``id_str``, ``reviewId``,
  ``objectID``), or that names the person under an owner key (their message, post, part), is dropped;
- an object listed under a container key (users, contacts, mentions) whose id is the person's is dropped;
- a reference key naming the person in someone else's object is removed from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from crawl_assets.core import catalog
from crawl_assets.core.catalog import resolve
from crawl_assets.normalize.persons import PersonIds

ITEM_ID_KEYS = ("id", "id_str", "reviewId", "objectID")
DROP = object()


@dataclass(frozen=True)
class Subject:
    """Whom a scrub removes: the native ids of their records and the raw spellings of their id."""

    spec: PersonIds
    items: frozenset[str] = frozenset()
    persons: frozenset[str] = frozenset()
    tokens: tuple[bytes, ...] = field(default=(), compare=False)

    @classmethod
    def of(cls, spec: PersonIds, author: str | None, items: frozenset[str] = frozenset()) -> "Subject":
        persons = spec.raw_ids(author) if author else frozenset()
        bare = {i.rsplit(":", 1)[-1] for i in items}  # a scoped item "{chat}:{id}" shows in raw bytes as its id
        other = {s for p in persons for s in spec.spellings(p)} if spec.spellings is not None else set()
        return cls(spec, frozenset(items), persons, tuple(sorted({v.encode() for v in bare | persons | other})))

    def may_occur_in(self, data: bytes) -> bool:
        """Cheap pre-check on raw bytes: False when none of the ids occurs at all (nothing to cut)."""
        return any(token in data for token in self.tokens)


@cache
def persons_of(platform: str) -> PersonIds:
    """The platform's ``PersonIds`` (an empty description when its spec declares none)."""
    spec = catalog.catalog().specs.get(platform)
    return resolve(spec.persons) if spec is not None and spec.persons else PersonIds()


def _scalar(value: Any) -> str | None:
    return None if value is None or isinstance(value, (dict, list, bool)) else str(value)


def _owned(node: dict[str, Any], subject: Subject, listed: bool, scope: str | None) -> bool:
    spec = subject.spec
    if subject.items:
        ids = (_scalar(node.get(k)) for k in ITEM_ID_KEYS)
        if spec.scope is not None:  # ids unique per scope only: "{scope}:{id}", like the records' keys
            ids = (f"{scope}:{i}" for i in ids if i is not None and scope is not None)
        if any(i in subject.items for i in ids):
            return True
    if not subject.persons:
        return False
    if any(k in node and spec.names(node[k], subject.persons, node) for k in spec.owner_keys):
        return True
    return listed and spec.names(node, subject.persons)


def scrub(value: Any, subject: Subject, listed: bool = False, scope: str | None = None) -> Any:
    """``value`` without everything of ``subject`` (at any depth); ``DROP`` when the value itself is theirs.
    ``listed``: the value sits under one of the platform's container keys (it may be a person); ``scope``:
    the scope (chat) an enclosing object opened, for platforms whose item ids are unique per scope."""
    if isinstance(value, dict):
        if subject.spec.scope is not None:
            scope = subject.spec.scope(value) or scope
        if _owned(value, subject, listed, scope):
            return DROP
        out = {}
        for k, v in value.items():
            if k in subject.spec.reference_keys and subject.persons and subject.spec.names(v, subject.persons, value):
                continue
            kept = scrub(v, subject, k in subject.spec.containers, scope)
            if kept is not DROP:
                out[k] = kept
        return out
    if isinstance(value, list):
        return [kept for v in value if (kept := scrub(v, subject, listed, scope)) is not DROP]
    return value


def mentions(text: str, ids: frozenset[str]) -> bool:
    """Whether ``text`` (a quarantine snippet) holds one of ``ids`` as a whole token, not inside another."""
    return any(re.search(rf"(?<![0-9A-Za-z_]){re.escape(i)}(?![0-9A-Za-z_])", text) for i in ids if i)
