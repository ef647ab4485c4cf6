"""Read and edit the registry file (YAML), reporting bad entries by file, line, entry and field.

Edits go through ruamel.yaml's round-trip mode so the comments and order a user wrote survive
``crawl-assets sources add/pause/remove``. The bytes live in a local file, an S3 object or a Postgres row
(``registry.storage``); a registry remembers the version it was read at and ``save`` refuses to overwrite
another one (``RegistryConflict``); ``update_registry`` re-reads and redoes its change then.

The registry's text is cut at its entries (``yaml_safe.EntryTexts``), so that an edit rewrites only the entry
it changes.

``registry_view``: the cached, read-only view sensors, runs and the webhook receiver read. It is parsed as above
(``parse_registry``) and validated by the same validation (``registry.validate``; an entry whose text is unchanged
since the last read is not validated again), cached by file size and mtime in memory and, on the single-machine
SQLite default, as JSON under ``$DAGSTER_HOME/cache`` (a new run process skips the YAML parse; the cached entries
go through the same validation again, so the cache never holds anything the file itself could not). With the
instance on Postgres a local disk keeps nothing of ours: no file cache then. A registry in S3 or Postgres is asked
on every call whether it changed since the version held in memory (a conditional GET, a version comparison in
SQL); the memory only spares the parse of an unchanged one.
"""

from __future__ import annotations

import hashlib
import io
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from crawl_assets import settings
from crawl_assets.core.display import shown
from crawl_assets.core.private import make_dirs, open_new
from crawl_assets.registry.models import SourceEntry, SourceStatus, redact_secrets
from crawl_assets.registry.storage import RegistryConflict, storage_of
from crawl_assets.registry.validate import (EntryError, RegistryFileError, anchors_refused, read_registry_bytes,
                                            tenant_clashes, validate_entries, validate_indexed)
from crawl_assets.registry.yaml_safe import AnchorRefused, EntryTexts, Unusual, fast_load, roundtrip

__all__ = ["EntryError", "Registry", "RegistryConflict", "RegistryFileError", "load_registry", "registry_view",
           "update_registry"]
UPDATE_ATTEMPTS = 20


@dataclass
class Registry:
    """The parsed file: valid entries, the errors of invalid ones, the document for editing and the version
    read ("" when there was none yet), which ``save`` expects to replace."""

    path: Path | str  # a local file, or a remote location (s3://bucket/key, postgres[:name])
    entries: list[SourceEntry] = field(default_factory=list)
    errors: list[EntryError] = field(default_factory=list)
    _doc: Any = None  # the round-trip document, read only when an edit needs it
    version: str = ""
    _text: EntryTexts | None = None  # the text cut at its entries: an edit rewrites only its own entry
    _source: str | None = None  # the text read, for the round-trip loader
    _keys: list[str | None] = field(default_factory=list)  # each entry's key, in the file's order (None: invalid)

    def by_key(self) -> dict[str, SourceEntry]:
        return {e.key: e for e in self.entries}

    def get(self, key_or_name: str) -> SourceEntry:
        """Find by partition key, or by name when that name is unique."""
        keyed = self.by_key()
        if key_or_name in keyed:
            return keyed[key_or_name]
        named = [e for e in self.entries if e.name == key_or_name]
        if len(named) == 1:
            return named[0]
        if len(named) > 1:
            raise KeyError(f"{key_or_name!r} is ambiguous: use one of {', '.join(e.key for e in named)}")
        raise KeyError(f"no source {key_or_name!r} in {self.path}")

    def for_platform(self, platform: str) -> list[SourceEntry]:
        return [e for e in self.entries if e.platform == platform]

    # -- editing -----------------------------------------------------------------------------
    def _raw_list(self) -> CommentedSeq:
        """The round-trip document's ``sources`` (the whole text read by ruamel the first time it is needed)."""
        if self._doc is None:
            text = self._text.text() if self._text is not None else self._source
            self._doc = _roundtrip_doc(self.path, text) if text else None
            self._text = None
            if self._doc is None:
                self._doc = CommentedMap()
        if "sources" not in self._doc or self._doc["sources"] is None:
            self._doc["sources"] = CommentedSeq()
        return self._doc["sources"]

    def _index_of(self, key: str) -> int:
        try:
            return self._keys.index(key)
        except ValueError:
            raise KeyError(f"no source {key!r} in {self.path}") from None

    def add(self, entry: SourceEntry) -> None:
        if entry.key in self.by_key():
            raise ValueError(f"source {entry.key!r} already exists in {self.path}")
        clash = tenant_clashes({entry.tenant, *(e.tenant for e in self.entries)}).get(entry.tenant)
        if clash:
            raise ValueError(clash)
        data = entry.model_dump(mode="json", exclude_defaults=True)
        data.setdefault("platform", entry.platform)
        data.setdefault("kind", entry.kind.value)
        ordered = {k: data.pop(k) for k in ("name", "tenant", "platform", "kind", "identifier") if k in data}
        ordered.update(data)
        item = self._text.new_item(ordered) if self._text is not None else None
        if item is not None and self._text is not None:
            self._text.append(item)
        else:
            self._raw_list().append(CommentedMap(ordered))
        self._keys.append(entry.key)
        self.entries.append(entry)

    def remove(self, key: str) -> SourceEntry:
        entry = self.get(key)
        index = self._index_of(entry.key)
        if self._text is not None:
            del self._text.items[index]
        else:
            del self._raw_list()[index]
        del self._keys[index]
        self.entries = [e for e in self.entries if e.key != entry.key]
        return entry

    def set_status(self, key: str, status: SourceStatus, reason: str | None = None) -> SourceEntry:
        """Pause or resume; the reason (people's text, or a server's error quoted by an automatic pause)
        is stored without anything that looks like a secret, on one line, at most 500 characters."""
        entry = self.get(key)
        reason = redact_secrets(reason) if reason else None
        index = self._index_of(entry.key)

        def change(raw: Any) -> None:
            raw["status"] = status.value
            if reason:
                raw["status_reason"] = reason
            elif "status_reason" in raw:
                del raw["status_reason"]

        item = self._text.changed_item(index, change, _plain) if self._text is not None else None
        if item is not None and self._text is not None:
            self._text.items[index] = item
        else:
            change(self._raw_list()[index])
        updated = entry.model_copy(update={"status": status, "status_reason": reason})
        self.entries = [updated if e.key == entry.key else e for e in self.entries]
        return updated

    def save(self) -> None:
        """Write the registry if it is still the version read; ``RegistryConflict`` (nothing written) otherwise."""
        if self._text is not None:
            text = self._text.text()
        else:
            out = io.StringIO()
            _yaml().dump(self._doc if self._doc is not None else {"sources": []}, out)
            text = out.getvalue()
        self.version = storage_of(self.path).write(text.encode("utf-8"), self.version)


def update_registry(path: str | os.PathLike[str], change: "Callable[[Registry], None]") -> Registry:
    """Load, change and save the registry; when another editor saved in between (``RegistryConflict``), load
    again and redo ``change``, so concurrent runs that pause sources (and a user's CLI edit), on any machine,
    never lose each other's writes."""
    for _ in range(UPDATE_ATTEMPTS - 1):
        reg = load_registry(path)
        change(reg)
        try:
            reg.save()
            return reg
        except RegistryConflict:
            continue
    reg = load_registry(path)
    change(reg)
    reg.save()
    return reg


def _yaml() -> YAML:
    return roundtrip()


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _field_line(raw: Any, loc: tuple[Any, ...]) -> int | None:
    """Best line number (1-based) for a pydantic error location inside a ruamel node."""
    node, line = raw, None
    try:
        line = raw.lc.line + 1
    except AttributeError:
        return None
    for part in loc:
        if isinstance(node, CommentedMap) and part in node:
            try:
                line = node.lc.data[part][0] + 1
            except (AttributeError, KeyError, IndexError):
                pass
            node = node[part]
        else:
            break
    return line


def load_registry(path: str | os.PathLike[str]) -> Registry:
    """Parse the registry. A missing file is an empty registry; a broken file raises.

    Invalid entries do not stop the valid ones: they are returned in ``errors`` so callers decide
    (the CLI exits 2, the sensor syncs the valid ones and keeps the partitions of invalid ones).
    """
    p = location(path)
    snapshot = storage_of(p).read()
    reg = Registry(path=p, version=snapshot.version)
    if snapshot.data is None:
        return reg
    return parse_registry(reg, snapshot.data)


def location(path: str | os.PathLike[str]) -> Path | str:
    """A registry location as given: a remote one as text, a local one as a path."""
    return str(path) if settings.is_remote(path) else Path(path)


def parse_registry(reg: Registry, data: bytes) -> Registry:
    """``reg`` (empty, with its location and version) filled from ``data``, the registry's bounded bytes: read
    once by the fast loader (libyaml's events), or by the round-trip loader for what the fast one leaves to it."""
    p = reg.path
    try:
        text = data.decode("utf-8")
        doc, lines = fast_load(data)
    except UnicodeDecodeError as exc:
        raise RegistryFileError(f"{p}: cannot read: {exc}") from exc
    except AnchorRefused as exc:
        raise anchors_refused(p, exc.line) from None
    except (Unusual, yaml.YAMLError):  # ruamel reads it (odd numbers, tags) or refuses it with its position
        return _parse_roundtrip(reg, text)
    reg._source = text
    raws = _sources(p, doc)
    if raws is None:
        return reg
    kept, reg.errors = validate_indexed(p, raws, lambda index, loc: lines.field_line(raws[index], loc))
    _fill(reg, len(raws), kept)
    reg._text = EntryTexts.cut(text, lines)
    return reg


def _sources(path: Path | str, doc: Any) -> list[Any] | None:
    if doc is None:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("sources", []), (list, type(None))):
        raise RegistryFileError(f"{path}: expected a mapping with a 'sources' list at the top level")
    return list(doc.get("sources") or [])


def _fill(reg: Registry, count: int, kept: list[tuple[int, SourceEntry]]) -> None:
    reg.entries = [entry for _, entry in kept]
    reg._keys = [None] * count
    for index, entry in kept:
        reg._keys[index] = entry.key


def _roundtrip_doc(path: Path | str, text: str) -> Any:
    try:
        return _yaml().load(text)
    except AnchorRefused as exc:
        raise anchors_refused(path, exc.line) from None
    except YAMLError as exc:
        raise RegistryFileError(shown(f"{path}: not valid YAML: {exc}".replace("\n", " "))) from exc


def _parse_roundtrip(reg: Registry, text: str) -> Registry:
    doc = _roundtrip_doc(reg.path, text)
    raws = _sources(reg.path, doc)
    if raws is None:
        return reg
    reg._doc = doc

    def locate(index: int, loc: tuple[Any, ...]) -> int | None:
        raw = raws[index]
        return _field_line(raw, loc) or (raw.lc.line + 1 if hasattr(raw, "lc") else None)

    kept, reg.errors = validate_indexed(reg.path, [_plain(r) for r in raws], locate)
    _fill(reg, len(raws), kept)
    return reg


# -- the cached read-only view ------------------------------------------------------------------------------
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
    if settings.is_remote(path):
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
    if settings.postgres_configured():
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
