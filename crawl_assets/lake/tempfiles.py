"""Temporary files of the lake's atomic writes: named by their writer, swept once abandoned.

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
import socket
import time
import uuid
from collections.abc import Iterable
from typing import Any, Protocol

from crawl_assets.lake.layout import source_folders, tenant_folders

PREFIX = ".tmp-"
TEMP_GRACE_SECONDS = 3600.0
HOST = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]
__all__ = ["source_folders", "sweep", "temp_name", "tenant_folders"]  # the folders: ``layout``'s


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
