"""Files and folders no other local user can read: the lake holds collected personal data, the instance's
databases API key hashes and sync state, the API's secret file what signs its cursors.

Every entry point (the CLI, the definitions a code location or run loads, the API's and the webhook receiver's
apps) calls :func:`owner_only` first, so whatever the process and its children create is its owner's (umask 077);
the writers of the lake, the registry, its cache and the API's files also give the modes themselves, for a
caller that never went through an entry point (a notebook, a test).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

FILE_MODE = 0o600
DIR_MODE = 0o700


def owner_only() -> None:
    """This process and the ones it starts create files 0600 and folders 0700 (umask 077)."""
    os.umask(0o077)


def make_dirs(path: str | os.PathLike[str]) -> None:
    """``path`` and each missing parent, created 0700 (``os.makedirs`` gives missing parents the umask's mode)."""
    missing: list[Path] = []
    folder = Path(path)
    while not folder.is_dir():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for one in reversed(missing):
        try:
            os.mkdir(one, DIR_MODE)
        except FileExistsError:
            if not one.is_dir():
                raise


def open_new(path: str | os.PathLike[str], *, exclusive: bool = False) -> BinaryIO:
    """``path`` opened for writing, created 0600 (``exclusive``: it must not exist yet)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    return os.fdopen(os.open(path, flags, FILE_MODE), "wb")


def private_file(path: str | os.PathLike[str]) -> Path:
    """``path`` (and its folder) created empty and 0600 when missing; an existing one narrowed to 0600."""
    path = Path(path)
    make_dirs(path.parent)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
    if path.stat().st_mode & 0o077:
        os.chmod(path, FILE_MODE)
    return path
