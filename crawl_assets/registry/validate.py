"""The one validation of a parsed registry, whichever parser read it (the CLI's round-trip loader, the
sensors' and runs' fast view, the webhook receiver): every reader accepts exactly the same entries.

Before parsing, :func:`check_size` bounds the file's size; each loader (``registry.yaml_safe``) refuses YAML
anchors and aliases in its own token or event stream, whatever their names (a 565-byte alias bomb expands to
gigabytes in any loader that follows them), and a key repeated inside one mapping. After parsing,
:func:`validate_entries` checks each entry (shape, length, secrets, the pydantic model), refuses a second
entry with the same key, and refuses tenants whose names would share a credential variable (``a-b`` and
``a_b`` both read ``..._A_B``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from crawl_assets.core.display import shown
from crawl_assets.core.names import env_part
from crawl_assets.registry.models import SourceEntry, find_secret

MAX_REGISTRY_BYTES = 64 << 20


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
        return shown(f"{where}: {who}: field '{self.field}': {self.message}")


def read_registry_bytes(path: Path) -> bytes:
    """The file's bytes, at most ``MAX_REGISTRY_BYTES`` (``RegistryFileError`` otherwise)."""
    try:
        with path.open("rb") as fh:
            data = read_bounded(fh)
    except OSError as exc:
        raise RegistryFileError(f"{path}: cannot read: {exc}") from exc
    return check_size(path, data)


def read_bounded(stream: Any, limit: int = MAX_REGISTRY_BYTES) -> bytes:
    """At most ``limit + 1`` bytes of ``stream``, read in 1 MiB pieces: ``read(limit + 1)`` would set aside the
    whole bound (64 MiB) for every read, whatever the file's size."""
    chunks, total = [], 0
    while total <= limit:
        chunk = stream.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def check_size(path: Path | str, data: bytes) -> bytes:
    """``data``, refused when over ``MAX_REGISTRY_BYTES`` (the loaders themselves refuse anchors and aliases)."""
    if len(data) > MAX_REGISTRY_BYTES:
        raise RegistryFileError(f"{path}: larger than {MAX_REGISTRY_BYTES} bytes")
    return data


def anchors_refused(path: Path | str, line: int) -> RegistryFileError:
    return RegistryFileError(f"{path}:{line}: YAML anchors and aliases (& and *) are not allowed in the registry; "
                             "write each entry out in full")


Locate = Callable[[int, tuple[Any, ...]], int | None]
_Checked = SourceEntry | tuple[tuple[tuple[Any, ...], str, str], ...]  # the entry, or its (loc, field, message)s
_memo: dict[str, _Checked] = {}  # the last registry's entries by their text: an edit validates only what changed


def validate_entries(path: Path | str, raws: Sequence[Any], locate: Locate) -> tuple[list[SourceEntry], list[EntryError]]:
    """Valid entries and the errors of invalid ones; ``locate(index, field_path)`` gives a line or None."""
    kept, errors = validate_indexed(path, raws, locate)
    return [entry for _, entry in kept], errors


def validate_indexed(path: Path | str, raws: Sequence[Any],
                     locate: Locate) -> tuple[list[tuple[int, SourceEntry]], list[EntryError]]:
    """:func:`validate_entries`, each valid entry with its index in ``raws``. An entry whose text is one the last
    call validated is not validated again (the model's checks depend on the entry alone); the checks across
    entries (duplicates, clashing tenants) always run."""
    global _memo
    entries: list[tuple[int, SourceEntry]] = []
    errors: list[EntryError] = []
    seen: set[str] = set()
    memo, previous = {}, _memo
    for i, raw in enumerate(raws):
        name = raw.get("name") if isinstance(raw, dict) else None
        name = name if isinstance(name, str) else None
        if not isinstance(raw, dict):
            errors.append(EntryError(path, i, locate(i, ()), None, "(entry)", "expected a mapping"))
            continue
        text = repr(raw)  # plain values only: repr tells apart 1, 1.0, True, "1", None and nan
        checked = previous.get(text)
        if checked is None:
            checked = _check(raw)
        memo[text] = checked
        if not isinstance(checked, SourceEntry):
            errors += [EntryError(path, i, locate(i, loc), name, fld, msg) for loc, fld, msg in checked]
            continue
        key = checked.key
        if key in seen:
            errors.append(EntryError(path, i, locate(i, ()), name, "name", f"duplicate source {key!r}"))
            continue
        seen.add(key)
        entries.append((i, checked))
    _memo = memo
    clashes = tenant_clashes(entry.tenant for _, entry in entries)
    kept = []
    for i, entry in entries:
        if entry.tenant in clashes:
            errors.append(EntryError(path, i, locate(i, ("tenant",)), entry.name, "tenant", clashes[entry.tenant]))
        else:
            kept.append((i, entry))
    errors.sort(key=lambda e: e.index)
    return kept, errors


def _check(raw: dict[str, Any]) -> _Checked:
    """One entry through the secret and length checks, then the model."""
    secret = find_secret(_without_reason(raw))
    if secret:
        loc = tuple(int(x) if x.isdigit() else x for x in secret[0].replace("[", ".").replace("]", "").split("."))
        return ((loc, secret[0], secret[1]),)
    try:
        return SourceEntry.model_validate(raw, context={"secrets_checked": True})  # just above, naming the field
    except ValidationError as exc:
        return tuple((tuple(err["loc"]), ".".join(str(x) for x in err["loc"]) or "(entry)",
                      err["msg"].removeprefix("Value error, ")) for err in exc.errors())


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
