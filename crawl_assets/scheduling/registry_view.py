"""A cached, read-only view of the registry for sensors and runs.

The registry is read the way every reader reads it (``registry.store.parse_registry``: libyaml's events built
into values in one pass, refusing anchors and aliases; ruamel only for what that leaves to it) and validated
with the same validation (``crawl_assets.registry.validate``: size bound, no repeated keys, the pydantic model,
duplicate sources, clashing tenants; an entry whose text is unchanged since the last read is not validated
again). The result is cached by file size and mtime: in memory (a sensor's later ticks pay nothing) and, on the
single-machine SQLite default, as JSON under ``$DAGSTER_HOME/cache`` (each new run process skips the YAML parse;
the cached entries go through the same validation again, so the cache can never hold, or execute, anything the
registry file itself could not). With the instance on Postgres, runs may land on any machine and a local disk
keeps nothing of ours: no file cache then.

A registry in S3 or Postgres (``CRAWL_REGISTRY=s3://bucket/key`` or ``postgres``) is asked on every call whether
it changed since the version held in memory (a conditional GET, or a version comparison in SQL): every reader,
on every machine, decides on the current version; the memory only spares the parse of an unchanged one.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import orjson

from crawl_assets import settings
from crawl_assets.instance import db as instance_db
from crawl_assets.core.private import make_dirs, open_new
from crawl_assets.registry import Registry, RegistryFileError, SourceEntry
from crawl_assets.registry.storage import is_remote, storage_of
from crawl_assets.registry.store import parse_registry
from crawl_assets.registry.validate import read_registry_bytes, validate_entries


_cache: dict[Path | str, tuple[tuple[int, int] | str, Registry, dict[str, SourceEntry]]] = {}
_lock = threading.Lock()


def _fingerprint(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _parse(path: Path | str, data: bytes, version: str = "") -> Registry:
    """The registry read once (``parse_registry``: libyaml's events, lines kept for errors), kept read-only."""
    reg = parse_registry(Registry(path=path, version=version), data)
    reg._text = reg._source = reg._doc = None  # the cache holds entries, not the text
    return reg


def _validated(path: Path | str, raws: list) -> Registry:
    entries, errors = validate_entries(path, raws, lambda index, loc: None)
    if errors:  # the same errors, with line numbers
        return _parse(path, read_registry_bytes(Path(path)))
    return Registry(path=path, entries=entries)


def _remote_view(location: str) -> tuple[Registry, dict[str, SourceEntry]]:
    with _lock:
        hit = _cache.get(location)
    snap = storage_of(location).read_if_changed(str(hit[0]) if hit is not None else "")
    if snap is None and hit is not None:
        return hit[1], hit[2]
    assert snap is not None
    reg = Registry(path=location) if snap.data is None else _parse(location, snap.data, snap.version)
    by_key = reg.by_key()
    with _lock:
        _cache[location] = (snap.version, reg, by_key)
    return reg, by_key


def registry_view(path: str | os.PathLike[str]) -> tuple[Registry, dict[str, SourceEntry]]:
    """The registry at ``path`` and its entries by key, re-read only when the file changed.

    Treat both as read-only; edit through ``update_registry``. A missing file is an empty registry.
    """
    if is_remote(path):
        return _remote_view(str(path))
    p = Path(path).resolve()
    if not p.exists():
        return Registry(path=p), {}
    fp = _fingerprint(p)
    with _lock:
        hit = _cache.get(p)
        if hit is not None and hit[0] == fp:
            return hit[1], hit[2]
    reg = _load_snapshot(p, fp)
    if reg is None:
        reg = _parse(p, read_registry_bytes(p))
        if not reg.errors:
            _save_snapshot(p, fp, reg)
    by_key = reg.by_key()
    with _lock:
        _cache[p] = (fp, reg, by_key)
    return reg, by_key


def _snapshot_path(path: Path) -> Path | None:
    if instance_db.postgres_configured():
        return None
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:16]
    return settings.dagster_home() / "cache" / f"registry-{digest}.json"


def _load_snapshot(path: Path, fp: tuple[int, int]) -> Registry | None:
    """The cached entries, validated again like the file's; None when missing, stale or not ours."""
    snap_path = _snapshot_path(path)
    if snap_path is None:
        return None
    try:
        with snap_path.open("rb") as fh:
            snap = orjson.loads(fh.read())
        if not isinstance(snap, dict) or tuple(snap.get("fingerprint") or ()) != fp or not isinstance(snap.get("entries"), list):
            return None
        return _validated(path, snap["entries"])
    except (OSError, orjson.JSONDecodeError, RegistryFileError, TypeError):
        return None


def _save_snapshot(path: Path, fp: tuple[int, int], reg: Registry) -> None:
    snap = _snapshot_path(path)
    if snap is None:
        return
    try:
        make_dirs(snap.parent)
        tmp = snap.with_suffix(f".{os.getpid()}.tmp")
        with open_new(tmp) as fh:  # the entries: as private as the registry
            fh.write(orjson.dumps({"fingerprint": list(fp), "entries": [e.model_dump(mode="json") for e in reg.entries]}))
        os.replace(tmp, snap)
    except OSError:
        pass  # a cache only
