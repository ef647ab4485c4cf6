"""Where an ``export_file`` source's file may be: under its tenant's import root, nowhere else.

    $CRAWL_IMPORT_ROOT/<tenant>/...     (default $DAGSTER_HOME/imports/<tenant>/)

An entry's ``identifier`` is a path relative to that folder (or an absolute path inside it). It is
refused when it leaves the folder (``..``, an absolute path elsewhere such as ``/proc/self/environ``) or
passes through a symbolic link (a link could lead anywhere, and could be swapped after a check). The file
is opened component by component below the tenant's folder with ``O_NOFOLLOW`` (``openat``), so what is
checked is what is read: ``sources add`` checks, and every sync checks again while opening.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from crawl_assets import names, settings
from crawl_assets.registry import SourceEntry

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


class ExportPathRefused(ValueError):
    """The identifier leaves the tenant's import root or goes through a symbolic link (the message says which)."""


def tenant_import_root(tenant: str) -> Path:
    return settings.import_root() / names.check_tenant(tenant)


def relative_export_path(entry: SourceEntry) -> tuple[Path, tuple[str, ...]]:
    """(the tenant's import root, the path's components below it), or ``ExportPathRefused``. Pure: no I/O."""
    root = tenant_import_root(entry.tenant)
    raw = entry.identifier
    where = f"source {entry.key!r}: export file {raw!r}"
    if "\x00" in raw:
        raise ExportPathRefused(f"{where}: not a path")
    path = os.path.normpath(raw)
    if os.path.isabs(path):
        root_text = os.path.normpath(str(root))
        if os.path.commonpath([root_text, path]) != root_text:
            raise ExportPathRefused(f"{where} is outside the tenant's import root {root}: put the file there "
                                    f"(set CRAWL_IMPORT_ROOT to move the root) and name it relative to it")
        path = os.path.relpath(path, root_text)
    parts = tuple(p for p in path.split(os.sep) if p not in ("", "."))
    if not parts or parts[0] == "..":
        raise ExportPathRefused(f"{where} leaves the tenant's import root {root}")
    return root, parts


def _refuse_link(where: str, part: str) -> ExportPathRefused:
    return ExportPathRefused(f"{where}: {part!r} is a symbolic link; links are not followed under the import root")


def _refuse_root_link(where: str, root: Path) -> ExportPathRefused:
    return ExportPathRefused(f"{where}: the tenant's import folder {root} is a symbolic link; links are not "
                             "followed: make it a real folder")


def open_export(entry: SourceEntry) -> int:
    """A read-only descriptor of the entry's export file, opened without following any link; the caller
    closes it. ``ExportPathRefused`` when confinement fails, ``FileNotFoundError``/``OSError`` otherwise."""
    root, parts = relative_export_path(entry)
    where = f"source {entry.key!r}: export file {entry.identifier!r}"
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and root.is_symlink():
            raise _refuse_root_link(where, root) from None
        raise
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode):
                    raise _refuse_link(where, part) from None
                raise
            os.close(fd)
            fd = nxt
        try:
            out = os.open(parts[-1], _FILE_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # the last component is a link
                raise _refuse_link(where, parts[-1]) from None
            raise
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(out).st_mode):
        os.close(out)
        raise ExportPathRefused(f"{where} is not a regular file")
    os.set_blocking(out, True)
    return out


def check_export_location(entry: SourceEntry) -> Path:
    """For ``sources add``: the file's path when the identifier stays inside the tenant's import root and
    no existing part of it is a symbolic link (a missing file is not refused here)."""
    root, parts = relative_export_path(entry)
    if root.is_symlink():  # lstat: the tenant's folder itself
        raise _refuse_root_link(f"source {entry.key!r}: export file {entry.identifier!r}", root)
    path = root
    for part in parts:
        path = path / part
        if path.is_symlink():
            raise _refuse_link(f"source {entry.key!r}: export file {entry.identifier!r}", part)
        if not path.exists():
            break
    return root.joinpath(*parts)


def export_fingerprint(entry: SourceEntry) -> str:
    """Cheap "anything new?" probe of an export file ('' when missing or refused): ``file_fingerprint``."""
    try:
        fd = open_export(entry)
    except (OSError, ValueError):
        return ""
    try:
        return file_fingerprint(fd)
    finally:
        os.close(fd)


def file_fingerprint(fd: int) -> str:
    """Size, modification and change times (ns) and inode of an open file. Any write changes the change time
    (which no user call can set back, unlike the modification time), a replaced file has another inode: equal
    fingerprints of one path mean the same content, without reading it."""
    st = os.fstat(fd)
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"
