"""The one validation of a parsed registry, whichever parser read it (the CLI's round-trip loader, the
sensors' and runs' fast view, the webhook receiver): every reader accepts exactly the same entries.

Before parsing, :func:`check_yaml_bytes` bounds the file's size and refuses YAML anchors and aliases (a
430-byte alias bomb expands to gigabytes in any loader that follows them); both parsers also refuse a
key repeated inside one mapping. After parsing, :func:`validate_entries` checks each entry (shape,
secrets, the pydantic model), refuses a second entry with the same key, and refuses tenants whose names
would share a credential variable (``a-b`` and ``a_b`` both read ``..._A_B``).
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from crawl_assets.names import env_part
from crawl_assets.registry.models import SourceEntry, find_secret

MAX_REGISTRY_BYTES = 64 << 20
_Parser = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class RegistryFileError(Exception):
    """The registry file as a whole cannot be used (unreadable, not YAML, wrong shape)."""


@dataclass(frozen=True)
class EntryError:
    path: Path | str  # the registry's location
    index: int
    line: int | None
    name: str | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        who = f"entry {self.index + 1}" + (f" ({self.name!r})" if self.name else "")
        return f"{where}: {who}: field '{self.field}': {self.message}"


def read_registry_bytes(path: Path) -> bytes:
    """The file's bytes, checked by :func:`check_yaml_bytes` (``RegistryFileError`` otherwise)."""
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_REGISTRY_BYTES + 1)
    except OSError as exc:
        raise RegistryFileError(f"{path}: cannot read: {exc}") from exc
    check_yaml_bytes(path, data)
    return data


def check_yaml_bytes(path: Path | str, data: bytes) -> None:
    """Refuse a file over ``MAX_REGISTRY_BYTES`` and any anchor or alias (events only: nothing expands)."""
    if len(data) > MAX_REGISTRY_BYTES:
        raise RegistryFileError(f"{path}: larger than {MAX_REGISTRY_BYTES} bytes")
    try:
        for event in yaml.parse(io.BytesIO(data), Loader=_Parser):
            anchor = getattr(event, "anchor", None)
            if anchor is not None:
                line = event.start_mark.line + 1
                raise RegistryFileError(f"{path}:{line}: YAML anchors and aliases (&{anchor} / *{anchor}) are not "
                                        "allowed in the registry; write each entry out in full")
    except yaml.YAMLError:
        return  # a syntax error: the parser reports it with its position


Locate = Callable[[int, tuple[Any, ...]], int | None]


def validate_entries(path: Path | str, raws: Sequence[Any], locate: Locate) -> tuple[list[SourceEntry], list[EntryError]]:
    """Valid entries and the errors of invalid ones; ``locate(index, field_path)`` gives a line or None."""
    entries: list[tuple[int, SourceEntry]] = []
    errors: list[EntryError] = []
    seen: set[str] = set()
    for i, raw in enumerate(raws):
        name = raw.get("name") if isinstance(raw, dict) else None
        name = name if isinstance(name, str) else None
        if not isinstance(raw, dict):
            errors.append(EntryError(path, i, locate(i, ()), None, "(entry)", "expected a mapping"))
            continue
        secret = find_secret(_without_reason(raw))
        if secret:
            loc = tuple(int(x) if x.isdigit() else x for x in secret[0].replace("[", ".").replace("]", "").split("."))
            errors.append(EntryError(path, i, locate(i, loc), name, secret[0], secret[1]))
            continue
        try:
            entry = SourceEntry.model_validate(raw)
        except ValidationError as exc:
            for err in exc.errors():
                loc = tuple(err["loc"])
                fld = ".".join(str(x) for x in loc) or "(entry)"
                errors.append(EntryError(path, i, locate(i, loc), name, fld, err["msg"].removeprefix("Value error, ")))
            continue
        if entry.key in seen:
            errors.append(EntryError(path, i, locate(i, ()), name, "name", f"duplicate source {entry.key!r}"))
            continue
        seen.add(entry.key)
        entries.append((i, entry))
    clashes = tenant_clashes(entry.tenant for _, entry in entries)
    kept = []
    for i, entry in entries:
        if entry.tenant in clashes:
            errors.append(EntryError(path, i, locate(i, ("tenant",)), entry.name, "tenant", clashes[entry.tenant]))
        else:
            kept.append(entry)
    errors.sort(key=lambda e: e.index)
    return kept, errors


def tenant_clashes(tenants: Any) -> dict[str, str]:
    """Tenants whose credential-variable part equals another tenant's, with the message saying so."""
    by_part: dict[str, set[str]] = defaultdict(set)
    for tenant in tenants:
        by_part[env_part(tenant)].add(tenant)
    out = {}
    for part, group in by_part.items():
        if len(group) > 1:
            for tenant in group:
                others = ", ".join(repr(t) for t in sorted(group - {tenant}))
                out[tenant] = (f"tenant {tenant!r} and tenant {others} would share the credential variables "
                               f"*__{part}*; rename one of them")
    return out


def _without_reason(raw: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in raw.items() if k != "status_reason"}
