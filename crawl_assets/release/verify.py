"""``verify_package``: a release folder checked against its manifest. The folder is untrusted input: names are
matched in full, links are not followed, every read is bounded, and a problem names the file."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import orjson

from crawl_assets.core.files import FileRefused, read_regular
from crawl_assets.release.files import FORMAT, MANIFEST, sha256_of

MAX_MANIFEST = 1 << 20
MAX_FILES = 64
FILE_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}\.(parquet|jsonl|json|csv|xlsx)")
RELEASE_ID = re.compile(r"rel-[0-9a-f]{20}")
SHA256 = re.compile(r"[0-9a-f]{64}")


class PackageInvalid(ValueError):
    """The package cannot be read as a release (its manifest is missing or malformed); the message names the file."""


def read_bounded(path: Path, limit: int) -> bytes:
    """A regular file's bytes (no link followed), refused when longer than ``limit``."""
    try:
        return read_regular(path, limit)
    except FileRefused as exc:
        raise PackageInvalid(f"{path.name}: {exc}") from None
    except OSError as exc:
        raise PackageInvalid(f"{path.name}: cannot be read ({exc.strerror or exc})") from None


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest, its shape checked (format, release id, file names, sizes and digests)."""
    try:
        manifest = orjson.loads(read_bounded(folder / MANIFEST, MAX_MANIFEST))
    except orjson.JSONDecodeError as exc:
        raise PackageInvalid(f"{MANIFEST}: not JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise PackageInvalid(f"{MANIFEST}: not a {FORMAT} manifest")
    if not isinstance(manifest.get("release_id"), str) or not RELEASE_ID.fullmatch(manifest["release_id"]):
        raise PackageInvalid(f"{MANIFEST}: release_id is not rel- and 20 hex digits")
    entries = manifest.get("files")
    if not isinstance(entries, list) or not 0 < len(entries) <= MAX_FILES:
        raise PackageInvalid(f"{MANIFEST}: files is not a list of 1 to {MAX_FILES} entries")
    seen = set()
    for entry in entries:
        ok = (isinstance(entry, dict) and set(entry) == {"name", "bytes", "sha256"} and isinstance(entry["name"], str)
              and FILE_NAME.fullmatch(entry["name"]) and entry["name"] != MANIFEST and isinstance(entry["bytes"], int)
              and not isinstance(entry["bytes"], bool) and entry["bytes"] >= 0 and isinstance(entry["sha256"], str)
              and SHA256.fullmatch(entry["sha256"]) and entry["name"] not in seen)
        if not ok:
            raise PackageInvalid(f"{MANIFEST}: bad file entry {str(entry)[:200]!r}")
        seen.add(entry["name"])
    return manifest


def verify_package(folder: str | os.PathLike[str]) -> tuple[str, list[str]]:
    """(release id, problems): each problem names a file (missing, unexpected, not a regular file, another size
    or digest). ``PackageInvalid`` when the manifest itself cannot be used."""
    folder = Path(folder)
    if folder.is_symlink() or not folder.is_dir():
        raise PackageInvalid(f"{folder}: not a folder (links are not followed)")
    manifest = read_manifest(folder)
    problems: list[str] = []
    listed = {e["name"]: e for e in manifest["files"]}
    present = {p.name for p in folder.iterdir()} - {MANIFEST}
    problems += [f"{name!r}: not in the manifest" for name in sorted(present - set(listed))]
    for name, entry in sorted(listed.items()):
        path = folder / name
        if name not in present:
            problems.append(f"{name}: missing")
            continue
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode):
            problems.append(f"{name}: not a regular file")
        elif info.st_size != entry["bytes"]:
            problems.append(f"{name}: {info.st_size} bytes, the manifest says {entry['bytes']}")
        elif sha256_of(path, limit=entry["bytes"])[0] != entry["sha256"]:
            problems.append(f"{name}: SHA-256 differs from the manifest's")
    return manifest["release_id"], problems
