"""Where a document is written and with which version: index and alias names (one index per tenant, family
and month of ``created_at``; a read alias per tenant), their generations, and external document versions.

    crawl-{family}-{tenant}.{YYYY.MM}    a month of a tenant's records or edges
    crawl-{family}-{tenant}.undated      monthly families: documents without a created_at
    crawl-authors-{tenant}.all           unpartitioned family
    crawl-features-{tenant}.all          unpartitioned: enrichment features (crawl_assets.enrich), joined by key
    crawl-{family}-{tenant}              the tenant's read alias (never an index name: no '.')

``crawl`` is the default prefix (``CRAWL_INDEX_PREFIX``, ``settings.index_prefix``): two deployments with
different prefixes share a cluster apart, since a prefix holds no ``-`` and every name and pattern ends it with one.

Names are derived, never stored, so every writer (sink, replay, backfill) routes a document to the same
index. A tenant name cannot contain ``.``, so the first ``.`` ends the tenant: names are injective in the
tenant (tenant ``t-undated``'s alias is not tenant ``t``'s undated index, ``crawl-records-t.*`` matches no
index of tenant ``t-x``). Indices named by the earlier scheme (``crawl-{family}-{tenant}-{suffix}``,
ambiguous) are recognised by ``parse_legacy_index`` and renamed by ``crawl_assets.index.legacy_names``.

Physical generations of an index: what ``crawl-assets es reindex`` leaves behind.

Writers always address the *logical* index name derived above (``crawl-records-acme-2026.01``).
Until its first reindex that name is the concrete index; a reindex turns it into an alias whose write
index is a generation ``{logical}.g{n}``. Everything that lists indices (setup, retention, stats) reads
physical names back to their logical one here, so names stay derived, never stored.

External document versions (``observation_version``): from observation order, so an older snapshot can never
overwrite a newer one.

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

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any, Literal

from crawl_assets import settings
from crawl_assets.core import names


Family = Literal["records", "edges", "authors", "features"]
FAMILIES: tuple[Family, ...] = ("records", "edges", "authors", "features")
# Families partitioned by month; authors (profiles) and features (enrichment) have one index per tenant.
MONTHLY: frozenset[str] = frozenset({"records", "edges"})
UNPARTITIONED_SUFFIX = "all"
# Monthly families put documents without a created_at (edges may have none) in one undated index per tenant.
UNDATED_SUFFIX = "undated"

_MONTH = re.compile(r"(\d{4})\.(0[1-9]|1[0-2])")
SEPARATOR = "."


def prefix() -> str:
    """This deployment's index prefix (``CRAWL_INDEX_PREFIX``, default ``crawl``)."""
    return settings.index_prefix()


class RoutingError(ValueError):
    """A document cannot be routed to an index (missing or unparsable ``created_at``)."""


def check_family(family: str) -> Family:
    if family not in FAMILIES:
        raise ValueError(f"unknown index family {family!r}; expected one of {', '.join(FAMILIES)}")
    return family  # type: ignore[return-value]


def check_tenant(tenant: str) -> str:
    return names.check_tenant(tenant)


def parse_instant(value: object) -> datetime:
    """An ISO 8601 instant (``Z`` or offset; naive means UTC) or epoch milliseconds as a UTC datetime."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, tz=timezone.utc)
    elif isinstance(value, str) and value:
        text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
        try:
            dt = datetime.fromisoformat(text)
        except ValueError as exc:
            raise RoutingError(f"not an ISO 8601 instant: {value!r}") from exc
    else:
        raise RoutingError(f"not an ISO 8601 instant: {value!r}")
    return dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt.astimezone(timezone.utc)


def month_of(created_at: object) -> str:
    """``YYYY.MM`` of a ``created_at`` value (UTC)."""
    if isinstance(created_at, str) and len(created_at) >= 8 and created_at[4] == "-" and created_at[7] == "-":
        # Fast path for the canonical UTC form the schema emits ("2026-11-30T03:17:00Z").
        if created_at.endswith(("Z", "+00:00")) and created_at[:4].isdigit() and created_at[5:7].isdigit():
            return f"{created_at[:4]}.{created_at[5:7]}"
    dt = parse_instant(created_at)
    return f"{dt.year:04d}.{dt.month:02d}"


def index_prefix(family: str, tenant: str) -> str:
    return f"{prefix()}-{check_family(family)}-{check_tenant(tenant)}{SEPARATOR}"


def index_name(family: str, tenant: str, month: str | None) -> str:
    """Concrete index for a family/tenant and month (``None`` for unpartitioned families)."""
    if family in MONTHLY:
        if month is None:
            return index_prefix(family, tenant) + UNDATED_SUFFIX
        if not _MONTH.fullmatch(month):
            raise RoutingError(f"a {family} index needs a YYYY.MM month, got {month!r}")
        return index_prefix(family, tenant) + month
    return index_prefix(family, tenant) + UNPARTITIONED_SUFFIX


def index_for(family: str, tenant: str, created_at: object) -> str:
    """The index a document with this ``created_at`` is written to (None: the undated index)."""
    month = month_of(created_at) if family in MONTHLY and created_at is not None else None
    return index_name(family, tenant, month)


def index_pattern(family: str, tenant: str | None = None) -> str:
    """Wildcard over a tenant's indices of a family (all tenants when ``tenant`` is None)."""
    if tenant is None:
        return f"{prefix()}-{check_family(family)}-*"
    return index_prefix(family, tenant) + "*"


def read_alias(family: str, tenant: str) -> str:
    """Per-tenant read alias covering all of the tenant's months of a family."""
    return f"{prefix()}-{check_family(family)}-{check_tenant(tenant)}"


def family_alias(family: str) -> str:
    """Cross-tenant read alias a family's template attaches to every index."""
    return f"{prefix()}-{check_family(family)}"


def template_name(family: str) -> str:
    return f"{prefix()}-{check_family(family)}"


def parse_index(name: str) -> tuple[str, str, str | None] | None:
    """``(family, tenant, month)`` of one of our concrete index names, else None."""
    first = prefix()
    for family in FAMILIES:
        head = f"{first}-{family}-"
        if not name.startswith(head):
            continue
        tenant, sep, suffix = name[len(head):].partition(SEPARATOR)
        if sep and names.is_tenant(tenant):
            return _with_suffix(family, tenant, suffix)
        return None
    return None


def parse_legacy_index(name: str) -> tuple[str, str, str | None] | None:
    """``(family, tenant, month)`` of an index named by the earlier scheme ``crawl-{family}-{tenant}-{suffix}``
    (the suffix is the part after the last ``-``), else None."""
    first = prefix()
    for family in FAMILIES:
        head = f"{first}-{family}-"
        if not name.startswith(head) or SEPARATOR in name[len(head):].rpartition("-")[0]:
            continue
        tenant, sep, suffix = name[len(head):].rpartition("-")
        if sep and names.is_slug(tenant):
            return _with_suffix(family, tenant, suffix)
    return None


def _with_suffix(family: str, tenant: str, suffix: str) -> tuple[str, str, str | None] | None:
    if family in MONTHLY and _MONTH.fullmatch(suffix):
        return family, tenant, suffix
    if family in MONTHLY and suffix == UNDATED_SUFFIX:
        return family, tenant, None
    if family not in MONTHLY and suffix == UNPARTITIONED_SUFFIX:
        return family, tenant, None
    return None


_GENERATION = re.compile(r"^(?P<logical>.+)\.g(?P<n>[1-9][0-9]{0,5})$")


def logical_name(physical: str) -> str:
    """The logical index a physical index belongs to (itself when it is not a generation)."""
    found = _GENERATION.match(physical)
    if found and parse_index(found["logical"]):
        return found["logical"]
    return physical


def generation(physical: str) -> int:
    """0 for the original concrete index, n for ``{logical}.g{n}``."""
    found = _GENERATION.match(physical)
    return int(found["n"]) if found and parse_index(found["logical"]) else 0


def physical_name(logical: str, n: int) -> str:
    return f"{logical}.g{n}"


def parse_physical(name: str) -> tuple[str, str, str | None] | None:
    """``naming.parse_index`` of a physical index's logical name: (family, tenant, month) or None."""
    return parse_index(logical_name(name))


def by_logical(names: Iterable[str]) -> dict[str, list[str]]:
    """Physical names grouped by logical name, oldest generation first. A group of two or more is a
    reindex that has not finished (the newest is the write index, the older ones are still read)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for name in names:
        groups[logical_name(name)].append(name)
    return {k: sorted(v, key=generation) for k, v in groups.items()}


# External versions

EPOCH = int(datetime(2000, 1, 1, tzinfo=timezone.utc).timestamp())
DELAY_BITS = 30
MAX_DELAY = (1 << DELAY_BITS) - 1
MAX_EDIT = (1 << 33) - 1


_UTC = timezone.utc
# Parsed instants by their text: a batch shares its collection times (and often its edit times).
_INSTANT_SECONDS: dict[str, int] = {}


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
        if len(_INSTANT_SECONDS) > 50_000:
            _INSTANT_SECONDS.clear()
        seconds = _INSTANT_SECONDS[value] = int(dt.timestamp())
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
    seconds = _INSTANT_SECONDS.get(value) if type(value) is str else None
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
    cache = _INSTANT_SECONDS
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
