"""External document versions from observation order, so an older snapshot can never overwrite a newer one.

Elasticsearch keeps, per ``_id``, the highest external version written; with ``version_type=external_gte``
a write whose version is lower is refused (409, counted as a no-op) and an equal one is accepted
(re-indexing the same batch is idempotent). The version therefore has to order observations of one
record the way we want "latest wins" to mean:

1. **edit time** first: the latest of ``edited_at``, ``deleted_at`` and ``created_at`` (a deletion is the
   newest edit of a record); a backfill that re-reads an old snapshot carries an older edit time and loses;
2. then **collection time** (``provenance.collected_at``): of two snapshots with the same edit time (metrics
   refreshes, a deletion noticed later) the one collected later wins.

Both go into one 63-bit integer: ``(edit_seconds - 2000-01-01) << 30 | collection_delay_seconds`` where the
delay is ``collected_at - edit time`` clamped to ``[0, 2**30 - 1]`` (about 34 years). Edit seconds fit
33 bits until the year 2272. Resolution is one second: two edits within the same second tie, and a tie
is accepted (last write wins), which is the platforms' own resolution anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from crawl_assets.index.naming import RoutingError, parse_instant

EPOCH = int(datetime(2000, 1, 1, tzinfo=timezone.utc).timestamp())
DELAY_BITS = 30
MAX_DELAY = (1 << DELAY_BITS) - 1
MAX_EDIT = (1 << 33) - 1


_UTC = timezone.utc
# Parsed instants by their text: a batch shares its collection times (and often its edit times).
_CACHE: dict[str, int] = {}


def _seconds(value: Any) -> int | None:
    """Epoch seconds of an instant value; None when absent or unparsable (that time is then ignored)."""
    if value is None or value == "":
        return None
    if type(value) is str:  # the common case
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            return None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=_UTC)
        if len(_CACHE) > 50_000:
            _CACHE.clear()
        seconds = _CACHE[value] = int(dt.timestamp())
        return seconds
    try:
        return int(parse_instant(value).timestamp())
    except RoutingError:
        return None


def _collected_at(doc: Mapping[str, Any]) -> Any:
    provenance = doc.get("provenance")
    if type(provenance) is dict or isinstance(provenance, Mapping):
        value = provenance.get("collected_at")
        if value:
            return value
    return doc.get("collected_at") or doc.get("observed_at")


def _cached_seconds(value: Any) -> int | None:
    """``_seconds`` with the cache looked up first (most instants of a run repeat)."""
    seconds = _CACHE.get(value) if type(value) is str else None
    return _seconds(value) if seconds is None else seconds


def _latest_edit(values: tuple[Any, ...]) -> int | None:
    """The latest of the given edit times (epoch seconds); None when none is usable."""
    edit = None
    for value in values:
        if value is None:
            continue
        seconds = _cached_seconds(value)
        if seconds is not None and (edit is None or seconds > edit):
            edit = seconds
    return edit


def compose(edit_seconds: int, collected_seconds: int | None) -> int:
    """The version for an observation: edit time (epoch seconds), then collection time.

    Clamped with comparisons rather than ``min``/``max``: the sink calls this for every document."""
    edit = edit_seconds - EPOCH
    edit = 0 if edit < 0 else MAX_EDIT if edit > MAX_EDIT else edit
    if collected_seconds is None:
        return edit << DELAY_BITS
    delay = collected_seconds - edit_seconds
    delay = 0 if delay < 0 else MAX_DELAY if delay > MAX_DELAY else delay
    return (edit << DELAY_BITS) | delay


def decompose(version: int) -> tuple[int, int]:
    """``(edit epoch seconds, collection delay seconds)`` of a version; for humans and tests."""
    return (version >> DELAY_BITS) + EPOCH, version & MAX_DELAY


def observation_version(doc: Mapping[str, Any], default: int | None = None) -> int:
    """External version of a record, edge or author document (see the module docstring).

    A document with no time at all gets ``default`` (edges are immutable facts: any constant will do),
    or raises :class:`RoutingError` when ``default`` is None."""
    get = doc.get
    created, edited, deleted, updated = get("created_at"), get("edited_at"), get("deleted_at"), get("updated_at")
    cache = _CACHE
    if edited is None and deleted is None and updated is None:
        # The common case, kept short (the sink calls this for every document): a never-edited record's
        # edit time is its creation time, and both instants are usually cached.
        edit = cache.get(created) if type(created) is str else None
        if edit is None and created is not None:
            edit = _seconds(created)
    else:
        edit = _latest_edit((edited, deleted, created, updated))
    provenance = get("provenance")
    value = (provenance.get("collected_at") if type(provenance) is dict else None) or _collected_at(doc)
    collected = cache.get(value) if type(value) is str else None
    if collected is None:
        collected = _seconds(value)
    if edit is None:
        if collected is None:
            if default is not None:
                return default
            raise RoutingError("no edited_at, deleted_at, created_at or collected_at to version the document by")
        edit = collected
    return compose(edit, collected)
