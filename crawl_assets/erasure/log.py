"""The erasure log: what was erased, when and how much, without the erased data.

One JSON line per erasure in the tenant's log (``Lake.append_erasure_log`` / ``Lake.read_erasure_log``). The
subject (a person ``platform:id`` or a source key) is kept only as an HMAC-SHA256 under the erasure key,
which is never in the lake: the secret ``CRAWL_ERASURE_KEY`` (machines of one deployment share it), else a
file outside the lake (``CRAWL_ERASURE_KEY_FILE``, default ``$DAGSTER_HOME/erasure.key``, created owner-only
by the first erasure). Whoever holds the key can confirm
that a given subject was erased (``entries_about``); whoever holds only the lake cannot, even by trying
every possible id (a salt stored beside a plain hash would let them).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from crawl_assets import settings
from crawl_assets.core.files import FileRefused, open_regular
from crawl_assets.lake import Lake

KEY_BYTES = 32
MAX_KEY_FILE = 4096
_FLAGS = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class ErasureKeyError(RuntimeError):
    """The erasure key cannot be used (inside the lake, readable by others, too short, unreadable)."""


def _inside(path: Path, root: str) -> bool:
    if "://" in root and not root.startswith("file://"):
        return False  # an object-store lake cannot hold a local file
    real_root = os.path.realpath(root.removeprefix("file://"))
    return os.path.commonpath([os.path.realpath(path), real_root]) == real_root


def _create(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FLAGS, 0o600)
    except FileExistsError:
        return  # another erasure made it first: read theirs
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_hex(KEY_BYTES) + "\n")


def erasure_key(lake: Lake) -> bytes:
    """The erasure log's key, from ``CRAWL_ERASURE_KEY`` or its file (made when missing); ``ErasureKeyError``
    says why it cannot be used."""
    shared = settings.erasure_key_secret().strip()
    if shared:
        if len(shared) < KEY_BYTES:
            raise ErasureKeyError(f"CRAWL_ERASURE_KEY holds fewer than {KEY_BYTES} characters")
        return shared.encode()
    return key_from_file(settings.erasure_key_file(), lake, what="the erasure key", env="CRAWL_ERASURE_KEY_FILE",
                         create=True)


def key_from_file(path: Path, lake: Lake, *, what: str, env: str, create: bool) -> bytes:
    """A secret key read from an owner-only regular file outside the lake (made when missing and ``create``);
    ``ErasureKeyError`` says why it cannot be used, naming the file but never showing the key."""
    if _inside(path, lake.root):
        raise ErasureKeyError(f"{what} {path} is inside the lake {lake.root}: whoever reads the lake could "
                              f"use it; set {env} to a path outside it")
    if create and not path.exists():
        _create(path)
    try:
        fh = open_regular(path)
    except FileRefused:
        raise ErasureKeyError(f"{what} {path} is not a regular file") from None
    except OSError as exc:
        raise ErasureKeyError(f"{what} {path} cannot be read: {exc.strerror or exc}") from None
    with fh:
        info = os.fstat(fh.fileno())
        if info.st_mode & 0o077:
            raise ErasureKeyError(f"{what} {path} is readable by other users (mode {stat.filemode(info.st_mode)}): "
                                  f"chmod 600 it")
        key = fh.read(MAX_KEY_FILE).strip()
    if len(key) < KEY_BYTES:
        raise ErasureKeyError(f"{what} {path} holds fewer than {KEY_BYTES} bytes")
    return key


def subject_digest(tenant: str, subject: str, key: bytes) -> dict[str, str]:
    """The log's trace of a subject: an HMAC that only the key's holder can recompute, and which key it was
    made with (a hash of the key, so a log survives a key change readably)."""
    mac = hmac.new(key, f"{tenant}\n{subject}".encode(), hashlib.sha256).hexdigest()
    return {"hmac_sha256": mac, "key_id": hashlib.sha256(b"crawl-assets erasure key\n" + key).hexdigest()[:12]}


def entries_about(lake: Lake, tenant: str, subject: str, key: bytes) -> list[dict[str, Any]]:
    """The tenant's log entries of erasures of ``subject`` (``x:777``, a source key), found with the key."""
    wanted = subject_digest(tenant, subject, key)["hmac_sha256"]
    return [e for e in lake.read_erasure_log(tenant)
            if hmac.compare_digest(str((e.get("subject") or {}).get("hmac_sha256", "")), wanted)]
