"""A release folder as one tar archive whose bytes depend only on the files: members in name order under a
folder named after the release, every time, owner and mode fixed (what the API sends its caller)."""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import BinaryIO

from crawl_assets.release.verify import FILE_NAME, MANIFEST


def _entry(name: str, size: int = 0, *, folder: bool = False) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.uid, info.gid, info.uname, info.gname = size, 0, 0, 0, "", ""
    info.type, info.mode = (tarfile.DIRTYPE, 0o755) if folder else (tarfile.REGTYPE, 0o644)
    return info


def write_tar(folder: Path, release_id: str, out: BinaryIO) -> None:
    """Write the package in ``folder`` (regular files with package names only) to ``out`` as ``release_id/...``."""
    names = sorted(p.name for p in folder.iterdir())
    if any(not (FILE_NAME.fullmatch(n) or n == MANIFEST) or not (folder / n).is_file() for n in names):
        raise ValueError(f"{folder}: holds something that is not a package file")
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        tar.addfile(_entry(release_id, folder=True))
        for name in names:
            path = folder / name
            with path.open("rb") as fh:
                tar.addfile(_entry(f"{release_id}/{name}", path.stat().st_size), fh)
