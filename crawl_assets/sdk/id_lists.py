"""The id list an ``id_list`` source hydrates: a file under the tenant's import root (the confinement of export
files, ``crawl_assets.sdk.exports``), one id a line. Either a release's ``ids.jsonl`` (a JSON object a line:
``platform`` and ``native_id``, or the item's ``key`` for platforms that name it so; lines of other platforms are counted and skipped: a release lists several)
or plain text (the id itself). Read bounded: a line longer than ``MAX_LINE`` is refused unread, and so is a
list of more than ``MAX_IDS`` ids. A refused line is named (``line N: reason``) in the sync's metadata, never
dropped silently; duplicates are asked once.
"""

from __future__ import annotations

import copy
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from crawl_assets.core.files import bounded_lines
from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.errors import SourceConfigError
from crawl_assets.sdk.exports import ExportPathRefused, open_export, tenant_import_root

ID_LIST = "id_list"  # the kind
MAX_LINE = 4096
MAX_IDS = 10_000_000
STATE_VERSION = 1  # of the hydration state ``IdList.resume`` gives
SHOWN_REFUSALS = 20  # refused lines named in the metadata (all are counted)


@dataclass
class IdList:
    """The ids of one list in their order, the list's SHA-256 (a changed file starts the hydration over)."""

    ids: list[str] = field(default_factory=list)
    digest: str = ""
    refused: list[str] = field(default_factory=list)  # the first SHOWN_REFUSALS, "line N: reason"
    refused_count: int = 0
    other_platforms: int = 0
    duplicates: int = 0

    def refuse(self, line: int, reason: str) -> None:
        self.refused_count += 1
        if len(self.refused) < SHOWN_REFUSALS:
            self.refused.append(f"line {line}: {reason}")

    def resume(self, state: dict[str, Any] | None) -> dict[str, Any]:
        """A copy of the saved hydration state (``next``: the position reached) when it is of this very list,
        else a fresh one: a changed file starts over."""
        if state and state.get("v") == STATE_VERSION and state.get("list") == self.digest:
            return copy.deepcopy(state)
        return {"v": STATE_VERSION, "list": self.digest, "next": 0}

    def metadata(self) -> dict[str, object]:
        return {"ids_listed": len(self.ids), "ids_refused": self.refused_count, "ids_duplicate": self.duplicates,
                "ids_other_platforms": self.other_platforms, "ids_refused_lines": "; ".join(self.refused)}


Pick = Callable[[dict[str, Any]], "str | None"]


def _native_id(raw: bytes, platform: str, out: IdList, number: int, pick: Pick | None) -> str | None:
    if not raw.startswith(b"{"):
        return raw.decode("utf-8", "replace")
    try:
        item = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        out.refuse(number, f"not JSON: {exc}")
        return None
    if not isinstance(item, dict):
        out.refuse(number, "a JSON object was expected")
        return None
    if item.get("platform", platform) != platform:
        out.other_platforms += 1
        return None
    value = pick(item) if pick is not None else item.get("native_id")
    if not isinstance(value, str):
        out.refuse(number, "an object with a string 'native_id' was expected" if pick is None
                   else "an object naming the item ('key') was expected")
        return None
    return value


def read_id_list(entry: SourceEntry, valid: Callable[[str], bool], what: str, *, pick: Pick | None = None) -> IdList:
    """The entry's id list; ``valid`` says whether a text is an id of the platform (``what`` names the shape);
    ``pick`` takes the id from a JSON line (default: its ``native_id``).
    ``SourceConfigError`` (the source pauses) when the file cannot be opened or holds too many ids."""
    try:
        fd = open_export(entry)
    except ExportPathRefused as exc:
        raise SourceConfigError(f"{exc} (field 'identifier')") from None
    except OSError as exc:
        raise SourceConfigError(f"source {entry.key}: id list {entry.identifier!r} under "
                                f"{tenant_import_root(entry.tenant)} cannot be opened: {exc.strerror or exc}") from None
    out, seen, digest = IdList(), set(), hashlib.sha256()
    with os.fdopen(fd, "rb") as fh:
        for number, line in bounded_lines(fh, MAX_LINE, digest):
            if line is None:
                out.refuse(number, f"longer than {MAX_LINE} bytes")
                continue
            raw = line.strip()
            if not raw:
                continue
            native = _native_id(raw, entry.platform, out, number, pick)
            if native is None:
                continue
            if not valid(native):
                out.refuse(number, f"not {what}: {native[:40]!r}")
            elif native in seen:
                out.duplicates += 1
            elif len(out.ids) >= MAX_IDS:
                raise SourceConfigError(f"source {entry.key}: id list {entry.identifier!r} holds more than "
                                        f"{MAX_IDS} ids; split it into several sources")
            else:
                seen.add(native)
                out.ids.append(native)
    out.digest = digest.hexdigest()
    return out
