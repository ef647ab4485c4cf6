"""Where a platform's raw payloads name a person, and how its records' ``author_id`` maps to those names.

Each source plugin declares one :class:`PersonIds` (``SourcePlugin.persons``), defined beside its
normalizer and used by it to build ``author_id``; erasure uses the same description to cut a person out
of raw data (``crawl_assets.erasure.scrub``), wherever the platform puts them:

- ``owner_keys``: an object holding one of these naming the person belongs to them (a message by them:
  X ``author_id``, Telegram ``from_id``, Intercom ``author``) and is cut out whole;
- ``containers``: objects listed under these keys *are* people (X ``includes.users``, Intercom
  ``contacts``): the one whose ``id`` is the person's is cut out;
- ``reference_keys``: these keys point at the person from someone else's object (X ``in_reply_to_user_id``,
  a Telegram mention's ``user_id``): the key is removed, the object stays.

A value names the person when it is one of their raw ids (:meth:`raw_ids`: ``author_id`` without its
type prefix when ``typed``, plus each ``prefixes`` spelling such as Telegram exports' ``user123``), or an
object (a Telethon ``PeerUser``, an Intercom author) whose ``id``/``user_id`` is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

ID_KEYS = ("id", "id_str", "user_id", "channel_id", "chat_id")


@dataclass(frozen=True)
class PersonIds:
    owner_keys: tuple[str, ...] = ()
    containers: tuple[str, ...] = ()
    reference_keys: tuple[str, ...] = ()
    typed: bool = False  # author_id is "{type}:{raw id}"
    prefixes: tuple[str, ...] = ()  # raw spellings "{prefix}{raw id}"
    # Where item ids are unique only within a scope (Telegram message ids, per chat): the scope a raw object
    # opens for itself and what it holds (its chat), or None. Items are then matched as "{scope}:{id}",
    # which is the record key without its platform ("telegram:{chat}:{id}").
    scope: Callable[[dict[str, Any]], str | None] | None = None
    # Author ids are unique per site only (Discourse: per forum), the site being the record key's second
    # part ("discourse:{host}:{post}"): erasure then names an author "{platform}:{site}:{id}".
    per_site: bool = False
    # Objects that spell a raw id another way (Telegram Desktop exports of 2020-2021: shifted peer ids):
    # ``bare(node, value)`` is the raw id ``value`` stands for inside ``node``; ``spellings(raw)`` every other
    # spelling ``raw`` may take (for the byte-level pre-check).
    bare: Callable[[dict[str, Any], Any], Any] | None = None
    spellings: Callable[[str], Iterable[str]] | None = None

    def author_id(self, raw_id: str | int | None, type_: str | None = None) -> str | None:
        """The record's ``author_id`` for a raw id (and its type, when ``typed``)."""
        if raw_id is None or raw_id == "":
            return None
        return f"{type_ or 'unknown'}:{raw_id}" if self.typed else str(raw_id)

    def split(self, value: str) -> tuple[str, str] | None:
        """(type, raw id) of a prefixed raw spelling (``user123`` → ``("user", "123")``), else None."""
        for prefix in self.prefixes:
            if value.startswith(prefix) and value[len(prefix):].isdigit():
                return prefix, value[len(prefix):]
        return None

    def item_id(self, key: str, native_id: str) -> str:
        """How erasure matches the raw item of a record: its native id, or ``{scope}:{id}`` when scoped."""
        return key.split(":", 1)[1] if self.scope is not None else native_id

    def raw_ids(self, author_id: str) -> frozenset[str]:
        """Every spelling under which the person of ``author_id`` appears in raw payloads."""
        raw = author_id.split(":", 1)[1] if self.typed and ":" in author_id else author_id
        return frozenset({raw, *(f"{p}{raw}" for p in self.prefixes)})

    def names(self, value: Any, raw: frozenset[str], node: dict[str, Any] | None = None) -> bool:
        """Whether ``value`` (an id, or an object carrying one) names the person whose spellings are ``raw``;
        ``node``: the object ``value`` was read from (where ``bare`` says how it spells ids)."""
        if isinstance(value, dict):
            return any(_scalar(value.get(k)) in raw for k in ID_KEYS)
        if node is not None and self.bare is not None:
            value = self.bare(node, value)
        return _scalar(value) in raw


def _scalar(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list, bool)):
        return None
    return str(value)
