"""Lake layout: where each kind of data lives under one root (path arithmetic, no I/O), and the temporary
files of the lake's atomic writes beside it (named by their writer, swept once abandoned).

    raw/{tenant}/{platform}/{source}/{batch}.jsonl.gz     observations exactly as received
    raw/{tenant}/{platform}/{source}/{batch}.meta.json    manifest; written last = batch committed
    tables/{table}/{tenant}/{platform}/{source}/{batch}.parquet   derived, one part per raw batch
    quarantine/{tenant}/{platform}/{source}/{batch}.jsonl rejected input with the reason
    deadletter/{tenant}/...                               index writes that failed, replayable
    index_state/{tenant}/{platform}/{source}/{batch}.done  a normalized part the index has accounted for
    state/{tenant}/{platform}/{source}/...                collectors' per-item state too big for a cursor
                                                          (X thread lookups, Telegram refresh fingerprints)
    media/{tenant}/{platform}/{source}/...                media files, only for sources that opt in
    landing/{tenant}/{platform}/{source}/{day}/{event}.json  pushed events (``crawl_assets.lake.landing``)
    features/{enricher}/{tenant}/...                      model-made features (``crawl_assets.enrich.store``)
    erasure/{tenant}/log.jsonl                            what was erased, without the erased data
    releases/{tenant}/{release}.json                      releases made of the tenant's records, kept like the log
    releases/{tenant}/hydrations/{release}.jsonl          what hydrating a release found, and why the rest is gone
    discovery/{tenant}/{platform}/candidates.json         chats the records name, for a person to approve

Every path is built here from names checked to be single path segments (``segment``), and the lake
refuses a relative path that climbs out of its root (``Lake.path``), so no name reaches another folder.

Raw data, derived tables and model-made features never share a folder, so everything derived can
be deleted and rebuilt from ``raw/`` without collecting again.

Every write goes to ``.tmp-{host}-{pid}-{random}`` beside its final name and is moved into place; a writer
killed in between leaves the temporary file behind. It is not data (never read as such), but it may hold a
part of some: sync runs sweep their source's folders, retention sweeps every tenant's, erasure the erased
tenant's. A temporary file is abandoned when its writer ran on this host and is gone, or when it has not
been written for ``TEMP_GRACE_SECONDS`` (a writer on another host, or of an earlier naming).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import socket
import time
import uuid
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any, Protocol

BATCH_ID = re.compile(r"^\d{8}T\d{12}Z-[0-9a-z]{1,12}-\d{4}(-e[0-9a-f]{8}b?)*$")  # suffix: rewritten by an erasure


RAW = "raw"
TABLES = "tables"
QUARANTINE = "quarantine"
INDEX_STATE = "index_state"
STATE = "state"
MEDIA = "media"
LANDING = "landing"
FEATURES = "features"
DEADLETTER = "deadletter"
DEADLETTER_PENDING = f"{DEADLETTER}/es"
DEADLETTER_REPLAYED = f"{DEADLETTER}/es-replayed"
ERASURE = "erasure"
RELEASES = "releases"
DISCOVERY = "discovery"
# every area a sync of one source writes into (besides its tables), in one folder per source
SOURCE_AREAS = (RAW, LANDING, QUARANTINE, INDEX_STATE, STATE, MEDIA)

# one folder name: a tenant, platform, source key, table, family or batch id, or ``*`` in a pattern
_SEGMENT = re.compile(r"[A-Za-z0-9_*][A-Za-z0-9_.*-]{0,199}")


def segment(name: str) -> str:
    """``name`` when it is one path segment that cannot climb (no ``/``, no leading ``.``), else ValueError."""
    if not isinstance(name, str) or _SEGMENT.fullmatch(name) is None:
        raise ValueError(f"invalid lake folder name {name!r}")
    return name


def source_dir(area: str, tenant: str, platform: str, source: str) -> str:
    return f"{area}/{segment(tenant)}/{segment(platform)}/{segment(source)}"


def _source_file(area: str, tenant: str, platform: str, source: str, name: str) -> str:
    return f"{source_dir(area, tenant, platform, source)}/{name}"


def index_marker(tenant: str, platform: str, source: str, batch_id: str) -> str:
    """The marker saying the index has accounted for one normalized part."""
    return _source_file(INDEX_STATE, tenant, platform, source, f"{segment(batch_id)}.done")


def state_file(tenant: str, platform: str, source: str, name: str) -> str:
    """A collector's per-item state of one source (too big for its cursor)."""
    return _source_file(STATE, tenant, platform, source, name)


def media_file(tenant: str, platform: str, source: str, name: str) -> str:
    """A downloaded media file of one source (opt-in)."""
    return _source_file(MEDIA, tenant, platform, source, name)


def raw_file(tenant: str, platform: str, source: str, batch_id: str) -> str:
    """A raw batch's data (``.jsonl.gz``); its manifest (written last) is ``raw_manifest``."""
    return _source_file(RAW, tenant, platform, source, f"{segment(batch_id)}.jsonl.gz")


def raw_manifest(tenant: str, platform: str, source: str, batch_id: str) -> str:
    return _source_file(RAW, tenant, platform, source, f"{segment(batch_id)}.meta.json")


def quarantine_file(tenant: str, platform: str, source: str, batch_id: str) -> str:
    """Rejected input of one batch, with the reasons."""
    return _source_file(QUARANTINE, tenant, platform, source, f"{segment(batch_id)}.jsonl")


def table_dir(table: str, tenant: str, platform: str, source: str) -> str:
    return source_dir(f"{TABLES}/{segment(table)}", tenant, platform, source)


def source_folders(tenant: str, platform: str, source: str) -> list[str]:
    """The folders (possibly with a ``*``) a sync of one source writes into: its areas, then its tables."""
    return [source_dir(area, tenant, platform, source) for area in SOURCE_AREAS] + [
        table_dir("*", tenant, platform, source)]


def tenant_folders(tenant: str) -> list[str]:
    """Every folder holding a tenant's files (its sources' folders, dead letters, the erasure log)."""
    return source_folders(tenant, "*", "*") + [deadletter_dir("*", "*", tenant), erasure_dir(tenant),
                                               f"{DISCOVERY}/{segment(tenant)}"]


def deadletter_dir(area: str, family: str, tenant: str) -> str:
    """Dead letters of one family and tenant; ``area`` is ``DEADLETTER_PENDING``, ``DEADLETTER_REPLAYED``
    or ``*`` (both)."""
    if area == "*":
        area = f"{DEADLETTER}/*"
    elif area not in (DEADLETTER_PENDING, DEADLETTER_REPLAYED):
        raise ValueError(f"not a dead-letter area: {area!r}")
    return f"{area}/{segment(family)}/{segment(tenant)}"


def discovery_file(tenant: str, platform: str) -> str:
    """The discovery candidates of one tenant and platform (derived from its records, recomputed whole)."""
    return f"{DISCOVERY}/{segment(tenant)}/{segment(platform)}/candidates.json"


def erasure_dir(tenant: str) -> str:
    return f"{ERASURE}/{segment(tenant)}"


def erasure_log(tenant: str) -> str:
    """The tenant's erasure log (one JSON line per erasure)."""
    return f"{erasure_dir(tenant)}/log.jsonl"


def releases_dir(tenant: str) -> str:
    return f"{RELEASES}/{segment(tenant)}"


def release_entry(tenant: str, release_id: str) -> str:
    """What the lake keeps of one release of the tenant: its query, counts and the keyed digests of its subjects."""
    return f"{releases_dir(tenant)}/{segment(release_id)}.json"


def hydration_report(tenant: str, release_id: str) -> str:
    """The tenant's hydration of one release: a JSON line per id of the release (found, gone and why, pending)."""
    return f"{releases_dir(tenant)}/hydrations/{segment(release_id)}.jsonl"


def new_batch_id(run_id: str | None, seq: int, now: datetime | None = None) -> str:
    """Sortable by time; unique per run and sequence number, so concurrent writers never collide."""
    now = now or datetime.now(timezone.utc)
    run = re.sub(r"[^0-9a-z]", "", (run_id or "local").lower())[:8] or "local"
    return f"{now.strftime('%Y%m%dT%H%M%S%f')}Z-{run}-{seq:04d}"


PREFIX = ".tmp-"
TEMP_GRACE_SECONDS = 3600.0
HOST = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]


class SweptFiles(Protocol):
    """What a sweep uses of ``store.Lake`` (which names its writes with ``temp_name``, so it imports this
    module, not the other way)."""

    fs: Any

    def path(self, relative: str) -> str: ...


def temp_name() -> str:
    return f"{PREFIX}{HOST}-{os.getpid()}-{uuid.uuid4().hex}"


def _writer_gone(name: str) -> bool:
    parts = name[len(PREFIX):].split("-")
    if len(parts) != 3 or parts[0] != HOST or not parts[1].isdigit():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, but another user's
        return False
    return False


def _idle_seconds(lake: SweptFiles, path: str, now: float) -> float:
    try:
        modified = lake.fs.modified(path)
    except (OSError, NotImplementedError):
        return 0.0
    return now - modified.timestamp()


def _folders(lake: SweptFiles, pattern: str) -> list[str]:
    """The existing folders matching ``pattern`` (``*`` within one segment), listing only the parents of its
    wildcard segments: ``tables/*/t/p/s`` lists ``tables/`` (a few table names), never every source's folder
    below it (what a glob walks on an object store: a sync's sweep then grew with the whole lake)."""
    found = [""]
    for part in pattern.split("/"):
        if not any(c in part for c in "*?["):
            found = [f"{base}/{part}" if base else part for base in found]
            continue
        expanded = []
        for base in found:
            try:
                names = [n.rstrip("/").rsplit("/", 1)[-1] for n in lake.fs.ls(lake.path(base), detail=False)]
            except (FileNotFoundError, NotADirectoryError):
                continue
            expanded += [f"{base}/{n}" for n in names if fnmatch.fnmatchcase(n, part) and not n.startswith(PREFIX)]
        found = expanded
    return found


def _temp_files(lake: SweptFiles, folder: str) -> list[str]:
    """The temporary files in ``folder`` and up to two levels below: one listing of the folder's objects on an
    object store (a flat, paginated list), a walk of it on a local disk."""
    base = lake.path(folder).rstrip("/") + "/"
    try:
        paths = lake.fs.find(base)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [p for p in paths if p.startswith(base) and p[len(base):].count("/") <= 2
            and p.rsplit("/", 1)[-1].startswith(PREFIX)]


def sweep(lake: SweptFiles, folders: Iterable[str], now: float | None = None) -> int:
    """Remove the abandoned temporary files in ``folders`` (and two levels below); how many."""
    now = time.time() if now is None else now
    removed = 0
    for pattern in folders:
        for folder in _folders(lake, pattern):
            for path in _temp_files(lake, folder):
                name = path.rsplit("/", 1)[-1]
                if _writer_gone(name) or _idle_seconds(lake, path, now) > TEMP_GRACE_SECONDS:
                    try:
                        lake.fs.rm(path)
                    except FileNotFoundError:
                        continue  # its writer moved it into place meanwhile
                    removed += 1
    return removed
