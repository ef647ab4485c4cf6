"""What every enricher is: a name, a declared version, parameters (and a model file), an output schema.

An enricher never rewrites a record. It reads columns of the normalized records and writes its own rows,
keyed by record key (or, for tenant-wide features, by what they describe: a cluster, a trend window, an
account), each row stamped with the enricher's name and **stamp**:

    {name}/{version}+{fingerprint[:12]}

``version`` is declared by hand and bumped when the enricher's output changes (a fixed rule, a new model
generation; the golden test of declared versions fails on a missed bump);
``fingerprint`` is the SHA-256 of the canonical parameters and the model file's bytes (when there is one),
so a changed threshold or a retrained model gets a new stamp too. Source edits that change no output get
none. A new stamp re-derives that enricher's output only (and marks its Dagster assets stale: the stamp is
their code version).

Two scopes:

* ``record``: ``extract`` turns one normalized part into the final rows of that part (personal data,
  classifier labels). Each row is about one record observation.
* ``tenant``: ``extract`` turns one normalized part into small per-record rows (a MinHash signature, the
  terms of a text, the facts of a post an account profile needs), and ``combine`` turns all of a
  tenant's per-record rows (every source, every platform) into the tenant's feature tables (clusters,
  trend windows, account profiles). ``extract`` is incremental like the records; ``combine`` is a cheap
  aggregate run again whenever a part changed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Literal

import orjson
import pyarrow as pa
from crawl_assets.core.files import FileRefused, open_regular

Scope = Literal["record", "tenant"]

# Columns every output row carries, first (what made it, and that it is inferred, not observed).
STAMP_FIELDS = [pa.field("enricher", pa.string()), pa.field("enricher_version", pa.string()),
                pa.field("inferred", pa.bool_())]
STAMP_NAMES = frozenset(f.name for f in STAMP_FIELDS)


@dataclass(frozen=True)
class CombineContext:
    """What ``combine`` knows besides the rows: whose they are and when it runs (``generated_at`` is
    stamped on every tenant-wide row; tests pass a fixed one)."""

    tenant: str
    generated_at: datetime
    # the tables this enricher left last time that it asks for (``previous_tables``, ``state_tables``), by name
    previous: Mapping[str, pa.Table] = field(default_factory=dict)


class Enricher:
    """Base class; subclasses set the class attributes and implement ``extract`` (and ``combine``)."""

    name: ClassVar[str]
    version: ClassVar[str]
    scope: ClassVar[Scope] = "record"
    columns: ClassVar[tuple[str, ...]] = ("key",)  # normalized record columns ``extract`` reads
    combine_columns: ClassVar[tuple[str, ...] | None] = None  # columns of the parts ``combine`` reads (None: all)
    description: ClassVar[str] = ""
    previous_tables: ClassVar[tuple[str, ...]] = ()  # tenant tables ``combine`` reads back (``CombineContext.previous``)
    # tenant tables kept apart (``_state``): never removed by an erasure (they must hold no record, key, author or
    # text), read back like ``previous_tables``
    state_tables: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **params: Any) -> None:
        unknown = set(params) - set(self.defaults())
        if unknown:
            raise ValueError(f"enricher {self.name!r}: unknown parameter(s) {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(sorted(self.defaults())) or 'none'}")
        self.params: dict[str, Any] = {**self.defaults(), **params}
        self.validate()

    # -- declared by subclasses -------------------------------------------------------------------------
    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Every parameter with its default (the parameters hashed into the stamp)."""
        return {}

    def validate(self) -> None:
        """Raise ``ValueError`` naming the parameter when a value is out of range."""

    def model_files(self) -> list[Path]:
        """Files whose bytes are part of the fingerprint (a model), each checked to be a regular file; none by
        default."""
        return []

    def check_usable(self) -> None:
        """Raise ``EnrichmentConfigError`` (with the reason) when this enricher's configuration cannot be used."""

    def hashed_params(self) -> dict[str, Any]:
        """The parameters as hashed into the fingerprint (a model path is left to ``model_files``)."""
        return self.params

    @property
    def part_schema(self) -> pa.Schema:
        """Schema of ``extract``'s rows, stamp fields included (see ``stamped_schema``)."""
        raise NotImplementedError

    def extract(self, records: pa.Table) -> pa.Table:
        """Rows for one normalized part (``records`` holds at least ``columns``), with ``part_schema``."""
        raise NotImplementedError

    def combine(self, rows: Iterable[pa.Table], context: CombineContext) -> dict[str, pa.Table]:
        """Tenant scope only: the tenant's feature tables (name -> table) from all its ``extract`` rows."""
        raise NotImplementedError

    def documents(self, table: str, rows: pa.Table, context: CombineContext | None) -> Iterator[dict[str, Any]]:
        """Index documents for ``rows`` of output ``table`` (``"part"`` for ``extract``'s rows)."""
        raise NotImplementedError

    # -- identity ---------------------------------------------------------------------------------------
    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        digest.update(orjson.dumps(self.hashed_params(), option=orjson.OPT_SORT_KEYS, default=str))
        for path in self.model_files():
            digest.update(path.name.encode())
            _hash_regular_file(digest, path)
        return digest.hexdigest()

    @property
    def stamp(self) -> str:
        cached = self.__dict__.get("_stamp")
        if cached is None:
            cached = self.__dict__["_stamp"] = f"{self.name}/{self.version}+{self.fingerprint()[:12]}"
        return cached

    def describe(self) -> dict[str, Any]:
        """Name, declared version, stamp and parameters: what a materialization or the CLI reports."""
        return {"enricher": self.name, "version": self.version, "stamp": self.stamp, "scope": self.scope,
                "params": {k: str(v) if isinstance(v, Path) else v for k, v in self.params.items()}}

    # -- helpers for subclasses -------------------------------------------------------------------------
    @staticmethod
    def stamped_schema(fields: list[pa.Field]) -> pa.Schema:
        return pa.schema([*STAMP_FIELDS, *fields])

    def stamp_columns(self, rows: int) -> dict[str, pa.Array]:
        return {"enricher": pa.repeat(pa.scalar(self.name, pa.string()), rows),
                "enricher_version": pa.repeat(pa.scalar(self.stamp, pa.string()), rows),
                "inferred": pa.repeat(pa.scalar(True, pa.bool_()), rows)}

    def table(self, schema: pa.Schema, columns: Mapping[str, Any]) -> pa.Table:
        """An output table: the stamp columns and ``columns`` (lists or arrays), in ``schema``'s order."""
        rows = len(next(iter(columns.values()))) if columns else 0
        data = {**self.stamp_columns(rows), **columns}
        return pa.table({f.name: data[f.name] for f in schema}, schema=schema)


def _hash_regular_file(digest: Any, path: Path) -> None:
    """Feed ``path``'s bytes to ``digest``: a regular file only (so a FIFO or device named as a model never
    hangs the reader), no more than its size when opened."""
    try:
        fh = open_regular(path, follow_links=True)
    except FileRefused:
        raise ValueError(f"model file {path} is not a regular file") from None
    except OSError as exc:
        raise ValueError(f"model file {path} cannot be read: {exc.strerror or exc}") from None
    with fh:
        left = os.fstat(fh.fileno()).st_size
        while left > 0 and (chunk := fh.read(min(left, 1 << 20))):
            digest.update(chunk)
            left -= len(chunk)


def feature_document(enricher: Enricher, doc_id: str, kind: str, **fields: Any) -> dict[str, Any]:
    """An index document of the ``features`` family (``fields`` include ``tenant``): ``key`` is its ``_id``
    (prefixed with the enricher, so enrichers never share ids), stamped like the Parquet rows and labelled
    as inferred."""
    return {"key": f"{enricher.name}:{doc_id}", "enricher": enricher.name, "enricher_version": enricher.stamp,
            "inferred": True, "kind": kind, **fields}


def record_feature(enricher: Enricher, ref: dict[str, Any], **payload: Any) -> dict[str, Any]:
    """The document of a record-level feature: ``ref`` (``columns.record_documents``) names the record."""
    return feature_document(enricher, ref["record_key"], "record", **ref, **payload)
