"""What ``crawl-assets sources add`` refuses besides an invalid entry: a source that would certainly fail
or silently ignore part of what the user asked for.

- an option an export file does not read (a typo would be ignored: ``timezon=UTC``; a live source's options
  are checked by its spec's options model when the entry is validated);
- an export file outside the tenant's import root or reached through a symbolic link
  (``crawl_assets.sdk.exports``, the same confinement the sync applies), or that does not exist;
- an export file that does not read as its format (``--option format=…``, else the platform's default):
  its first items are run through that format's normalizer with the source's normalization options
  (``timezone``, ``languages``: refused when invalid); when none is a record (only errors and known
  non-posts), the sync would quarantine everything. The formats it does read as are named.

What it only warns about: a live source whose credential variables are not set where the command runs
(its first sync would pause it), named exactly (``unset_credentials``).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable

from crawl_assets.registry import Registry, SourceEntry, SourceKind
from crawl_assets.normalize.context import NORMALIZE_OPTIONS, normalize_options
from crawl_assets.registry.models import EXPORT_FORMATS

SNIFF_ITEMS = 50


def refusal(entry: SourceEntry, registry: Registry, option_names: Iterable[str]) -> str | None:
    """Why ``entry`` may not be added (``field '…': reason``), or None."""
    if entry.kind is not SourceKind.export_file:
        return None  # a live source's options were checked by its spec's options model (SourceEntry)
    known = ("format", *NORMALIZE_OPTIONS)
    unknown = sorted(set(option_names) - set(known))
    if unknown:
        return (f"field 'options': unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                f"for {entry.platform} export files; known: {', '.join(known)}")
    from crawl_assets.sdk.exports import ExportPathRefused, check_export_location

    try:
        normalize_options(entry.options)
    except ValueError as exc:  # "options.timezone: unknown time zone …"
        option, _, why = str(exc).partition(": ")
        return f"field {option!r}: {why}"

    try:
        path = check_export_location(entry)
    except ExportPathRefused as exc:
        return f"field 'identifier': {exc}"
    if not path.is_file():
        return f"field 'identifier': export file not found: {path}"
    fmt = entry.export_format or ""
    problem = unreadable_as(entry, fmt)
    if problem is None:
        return None
    from crawl_assets.sources.telegram.normalize_export import NEEDS_TIMEZONE

    if problem.startswith(NEEDS_TIMEZONE):  # the format is right: the export needs its computer's time zone
        return f"field 'options.timezone': {path}: {problem}"
    fits = [f for f in EXPORT_FORMATS[entry.platform] if f != fmt and unreadable_as(entry, f) is None]
    named = "named" if "format" in entry.options else "the default, none was named"
    hint = f"it reads as {' or '.join(fits)}: add --option format={fits[0]}" if fits else \
        f"{entry.platform} export formats: {', '.join(EXPORT_FORMATS[entry.platform])}"
    return f"field 'options.format': {path} does not read as {fmt} ({named}): {problem}; {hint}"


def unreadable_as(entry: SourceEntry, fmt: str) -> str | None:
    """None when the export file's first items normalize in format ``fmt`` (or it holds none), else why not.
    The file is opened as the sync opens it (confined, no link followed) and read as the pipeline reads it
    (gzip, BOM)."""
    from crawl_assets.normalize import NormalizeContext
    from crawl_assets.normalize.reading import normalize_stream
    from crawl_assets.normalize.reading import decode_input
    from crawl_assets.schema import Rejection
    from crawl_assets.sdk.exports import open_export

    try:
        with os.fdopen(open_export(entry), "rb") as fh:
            content = decode_input(fh)
            context = NormalizeContext(**normalize_options(entry.options))  # as the sync will read it
            items = list(itertools.islice(normalize_stream(fmt, content.stream, name=entry.identifier,
                                                           context=context), SNIFF_ITEMS))
    except Exception as exc:  # noqa: BLE001 - any parse failure means "not this format"
        return f"{type(exc).__name__}: {exc}"[:300]
    errors = [i for i in items if isinstance(i, Rejection) and i.error]
    if errors and all(isinstance(i, Rejection) for i in items):  # no record, only errors and non-posts
        return errors[0].reason[:500]
    return None


def unset_credentials(entry: SourceEntry) -> list[str]:
    """The environment variables a live source needs to sync that are not set here (its spec's ``credentials``,
    else its pull spec's ``secret``), each named exactly; nothing for an export file."""
    from crawl_assets import settings
    from crawl_assets.core import catalog
    from crawl_assets.core.catalog import resolve
    from crawl_assets.core.names import secret_variable

    if entry.kind is SourceKind.export_file:
        return []
    spec, environ = catalog.spec(entry.platform), settings.environment()
    if spec.credentials:
        return list(resolve(spec.credentials)(entry, environ))
    if spec.pull is None or not spec.pull.secret:
        return []
    var = secret_variable(f"CRAWL_{entry.platform.upper()}_{spec.pull.secret}", entry.tenant, entry.credential)
    return [] if environ.get(var) else [var]
