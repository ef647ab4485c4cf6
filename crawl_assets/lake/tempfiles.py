"""Temporary files of the lake's atomic writes: named by their writer, swept once abandoned.

Every write goes to ``.tmp-{host}-{pid}-{random}`` beside its final name and is moved into place; a writer
killed in between leaves the temporary file behind. It is not data (never read as such), but it may hold a
part of some: sync runs sweep their source's folders, retention sweeps every tenant's, erasure the erased
tenant's. A temporary file is abandoned when its writer ran on this host and is gone, or when it has not
been written for ``TEMP_GRACE_SECONDS`` (a writer on another host, or of an earlier naming).
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING

from crawl_assets.lake.layout import source_folders, tenant_folders

if TYPE_CHECKING:
    from crawl_assets.lake.store import Lake

PREFIX = ".tmp-"
TEMP_GRACE_SECONDS = 3600.0
HOST = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]
__all__ = ["source_folders", "sweep", "temp_name", "tenant_folders"]  # the folders: ``layout``'s


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


def _idle_seconds(lake: Lake, path: str, now: float) -> float:
    try:
        modified = lake.fs.modified(path)
    except (OSError, NotImplementedError):
        return 0.0
    return now - modified.timestamp()


def sweep(lake: Lake, folders: Iterable[str], now: float | None = None) -> int:
    """Remove the abandoned temporary files in ``folders`` (and one level below); how many."""
    now = time.time() if now is None else now
    removed = 0
    for folder in folders:
        for pattern in (f"{folder}/{PREFIX}*", f"{folder}/*/{PREFIX}*", f"{folder}/*/*/{PREFIX}*"):
            for path in lake.fs.glob(lake.path(pattern)):
                name = path.rsplit("/", 1)[-1]
                if _writer_gone(name) or _idle_seconds(lake, path, now) > TEMP_GRACE_SECONDS:
                    try:
                        lake.fs.rm(path)
                    except FileNotFoundError:
                        continue  # its writer moved it into place meanwhile
                    removed += 1
    return removed
