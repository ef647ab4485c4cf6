"""Lake I/O on any fsspec filesystem: raw batches written once, derived Parquet parts, quarantine.

Every write goes to a temporary name first and is moved into place, so a crash leaves either the
whole file or nothing under its final name (temporary files a crash leaves are swept: ``layout``).
A raw batch counts only once its manifest exists. On an object store (S3) there is no rename: an object
appears whole when its upload completes, and a move is a server-side copy (as atomic) then a delete, so the
same holds.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import IO, Any

import fsspec
from fsspec.implementations.local import LocalFileSystem
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from isal import igzip

from crawl_assets.core.private import make_dirs, open_new
from crawl_assets.lake import layout
from crawl_assets.lake.areas import LakeAreas

# Arrow buffers from the C library's allocator: pyarrow's default (mimalloc) keeps freed pages, so a process
# that streams parts batch after batch holds more at its peak (docs/OPERATIONS.md).
pa.set_memory_pool(pa.system_memory_pool())

RAW_GZIP_LEVEL = 1  # raw batches: write speed over size (see ``Lake.write_raw_batch``)


@dataclass(frozen=True)
class BatchManifest:
    """What a raw batch holds and how it was collected (the provenance of everything derived)."""

    batch_id: str
    tenant: str
    platform: str
    source: str
    format: str
    method: str
    collected_at: str
    run_id: str | None
    items: int
    bytes: int
    sha256: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RawBatch:
    manifest: BatchManifest
    path: str


class Lake(LakeAreas):
    """A lake rooted at a local folder or an fsspec URL (``s3://bucket/prefix``, ``memory://x``).

    Every path it takes is relative to its root and checked not to leave it (``path``); the areas' paths
    are built by ``layout`` and the areas' operations are ``LakeAreas``' methods."""

    def __init__(self, root: str):
        self.root = root.rstrip("/")
        # An object store's listings are not cached: other processes and machines write the same lake, and
        # a cached listing would hide their batches from a long-lived reader (a sensor, the API) for good.
        local = fsspec.core.split_protocol(self.root)[0] in (None, "file", "local", "memory")
        self.fs, self._base = fsspec.core.url_to_fs(self.root, **({} if local else {"use_listings_cache": False}))
        self._private = isinstance(self.fs, LocalFileSystem)  # on a disk: files 0600, folders 0700

    def _makedirs(self, full: str) -> None:
        if self._private:
            make_dirs(full)
        else:
            self.fs.makedirs(full, exist_ok=True)

    def _create(self, full: str) -> IO[bytes]:
        """A new file to write, its owner's alone on a local disk."""
        return open_new(full) if self._private else self.fs.open(full, "wb")

    # -- paths -------------------------------------------------------------------------------
    def path(self, relative: str) -> str:
        """The filesystem path of ``relative``; ValueError when it would leave the root."""
        if relative.startswith("/") or any(c in relative for c in ("\\", "\x00", "://")) \
                or any(part in (".", "..") for part in relative.split("/")):
            raise ValueError(f"lake path {relative!r} is not a plain path under the lake root")
        return f"{self._base}/{relative}"

    def url(self, relative: str) -> str:
        """A location a user can open: the root as configured plus the relative path."""
        return f"{self.root}/{relative}"

    def location(self, relative: str) -> str:
        """The filesystem path of ``relative`` with its protocol when it is not local (``s3://...``)."""
        protocol = self.fs.protocol[0] if isinstance(self.fs.protocol, (tuple, list)) else self.fs.protocol
        full = self.path(relative)
        return full if protocol in ("file", "local") else f"{protocol}://{full}"

    def relative(self, full: str) -> str:
        """The relative path of a filesystem path (or URL) under the root; ValueError when it is not under it."""
        prefix = self._base.rstrip("/") + "/"
        if not full.startswith(prefix):  # a URL, or a local path given relative to the working folder
            full = fsspec.core.url_to_fs(full)[1]
        if not full.startswith(prefix):
            raise ValueError(f"{full!r} is not under the lake root {self.root}")
        rel = full[len(prefix):]
        self.path(rel)  # checks it
        return rel

    # -- files by relative path --------------------------------------------------------------
    def glob(self, pattern: str) -> list[str]:
        """Relative paths matching ``pattern`` (fsspec glob: ``*`` within one folder), sorted."""
        return sorted(self.relative(full.rstrip("/")) for full in self.fs.glob(self.path(pattern)))

    def open_read(self, relative: str) -> IO[bytes]:
        """A file's bytes as a stream (FileNotFoundError when it does not exist)."""
        return self.fs.open(self.path(relative), "rb")

    def open_write(self, relative: str) -> IO[bytes]:
        """A new file written in place as a stream (an append-only log, e.g. dead letters); its folder made."""
        full = self.path(relative)
        self._makedirs(full.rsplit("/", 1)[0])
        return self._create(full)

    def remove(self, *relative: str) -> int:
        """Remove the files that exist among ``relative``; how many were removed."""
        gone = 0
        for rel in relative:
            full = self.path(rel)
            if self.fs.exists(full):
                try:
                    self.fs.rm(full)
                except FileNotFoundError:
                    continue  # removed meanwhile
                gone += 1
        return gone

    def remove_tree(self, relative: str) -> bool:
        """Remove a folder and everything under it; whether it existed."""
        full = self.path(relative)
        if not self.fs.exists(full):
            return False
        self.fs.rm(full, recursive=True)
        return True

    def is_dir(self, relative: str) -> bool:
        return self.fs.isdir(self.path(relative))

    def move(self, relative: str, target: str) -> None:
        """Move a file (within the lake), making the target's folder."""
        full = self.path(target)
        self._makedirs(full.rsplit("/", 1)[0])
        self.fs.mv(self.path(relative), full)

    def modified(self, relative: str) -> datetime | None:
        """When a file was last written (UTC), or None when the filesystem cannot say."""
        try:
            stamp = self.fs.modified(self.path(relative))
        except (OSError, NotImplementedError):
            return None
        return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)

    # -- atomic writes -----------------------------------------------------------------------
    def _write_atomic(self, relative: str, data: bytes, *, overwrite: bool) -> str:
        final = self.path(relative)
        if not overwrite and self.fs.exists(final):
            raise FileExistsError(f"refusing to overwrite {self.url(relative)}")
        parent = final.rsplit("/", 1)[0]
        self._makedirs(parent)
        tmp = f"{parent}/{layout.temp_name()}"
        with self._create(tmp) as fh:
            fh.write(data)
        self.fs.mv(tmp, final)
        return final

    def write_bytes(self, relative: str, data: bytes, *, overwrite: bool = True) -> str:
        """A small file (marker, state) written atomically."""
        return self._write_atomic(relative, data, overwrite=overwrite)

    def exists(self, relative: str) -> bool:
        return self.fs.exists(self.path(relative))

    def read_bytes(self, relative: str, size: int = -1) -> bytes | None:
        """A small file's bytes (its first ``size`` ones when given), or None when it does not exist."""
        try:
            with self.fs.open(self.path(relative), "rb") as fh:
                return fh.read(size)
        except FileNotFoundError:
            return None

    # -- raw batches -------------------------------------------------------------------------
    def write_raw_batch(
        self,
        *,
        tenant: str,
        platform: str,
        source: str,
        batch_id: str,
        fmt: str,
        method: str,
        run_id: str | None,
        lines: Iterable[bytes] | None = None,
        stream: IO[bytes] | None = None,
        collected_at: datetime | None = None,
        extra: dict[str, Any] | None = None,
    ) -> RawBatch:
        """Store observations exactly as received: JSON ``lines`` (one per item) or a whole ``stream``
        (an export file), gzip-compressed while streaming so size never matters.

        ISA-L (``isal.igzip``) at level 1 (``RAW_GZIP_LEVEL``): on JSON lines ~5x as fast as zlib at level 1 to
        write and ~3x to read, the file a little smaller; still plain gzip, so every reader (and every batch
        written before, by zlib) reads it the same way. Raw batches are written once and read once per
        normalizer version: speed wins.

        Never overwrites: a batch id is used once. The manifest is written after the data, so a
        reader that sees the manifest sees the complete batch.
        """
        if (lines is None) == (stream is None):
            raise ValueError("give exactly one of lines or stream")
        base = layout.source_dir(layout.RAW, tenant, platform, source)
        final = self.path(f"{base}/{batch_id}.jsonl.gz")
        if self.fs.exists(final):
            raise FileExistsError(f"refusing to overwrite {self.url(f'{base}/{batch_id}.jsonl.gz')}")
        self._makedirs(self.path(base))
        tmp = self.path(f"{base}/{layout.temp_name()}")
        digest, size, items = hashlib.sha256(), 0, 0
        try:
            with self._create(tmp) as raw_fh, igzip.GzipFile(fileobj=raw_fh, mode="wb", compresslevel=RAW_GZIP_LEVEL, mtime=0) as gz:
                if lines is not None:
                    for line in lines:
                        if b"\n" in line:
                            raise ValueError("a raw line must not contain a newline")
                        chunk = line + b"\n"
                        gz.write(chunk)
                        digest.update(chunk)
                        size += len(chunk)
                        items += 1
                else:
                    assert stream is not None
                    items = 1
                    while chunk := stream.read(1 << 20):
                        gz.write(chunk)
                        digest.update(chunk)
                        size += len(chunk)
            self.fs.mv(tmp, final)
        except BaseException:
            if self.fs.exists(tmp):
                self.fs.rm(tmp)
            raise
        manifest = BatchManifest(
            batch_id=batch_id,
            tenant=tenant,
            platform=platform,
            source=source,
            format=fmt,
            method=method,
            collected_at=(collected_at or datetime.now(timezone.utc)).isoformat(),
            run_id=run_id,
            items=items,
            bytes=size,
            sha256=digest.hexdigest(),
            extra=extra or {},
        )
        self._write_atomic(f"{base}/{batch_id}.meta.json", orjson.dumps(asdict(manifest)), overwrite=False)
        return RawBatch(manifest, self.url(f"{base}/{batch_id}.jsonl.gz"))

    def raw_batches(self, tenant: str, platform: str, source: str) -> list[RawBatch]:
        """Committed batches of a source in collection order (batch ids sort by time)."""
        base = layout.source_dir(layout.RAW, tenant, platform, source)
        if not self.fs.exists(self.path(base)):
            return []
        out = []
        for meta_path in sorted(self.fs.glob(self.path(f"{base}/*.meta.json"))):
            with self.fs.open(meta_path, "rb") as fh:
                manifest = BatchManifest(**orjson.loads(fh.read()))
            out.append(RawBatch(manifest, self.url(f"{base}/{manifest.batch_id}.jsonl.gz")))
        return out

    def open_raw(self, batch: RawBatch) -> IO[bytes]:
        """The batch's decompressed bytes as a stream (never loaded whole)."""
        m = batch.manifest
        return igzip.open(self.fs.open(self.path(layout.raw_file(m.tenant, m.platform, m.source, m.batch_id)), "rb"), "rb")

    # -- derived tables ----------------------------------------------------------------------
    def table_part(self, table: str, tenant: str, platform: str, source: str, batch_id: str) -> str:
        return f"{layout.table_dir(table, tenant, platform, source)}/{batch_id}.parquet"

    def has_part(self, relative: str, *, version: str | None = None) -> bool:
        """True when the part exists (and, if ``version`` is given, was written by that version)."""
        full = self.path(relative)
        if not self.fs.exists(full):
            return False
        if version is None:
            return True
        with self.fs.open(full, "rb") as fh:
            meta = pq.read_schema(fh).metadata or {}
        return meta.get(b"crawl_assets.deriver") == version.encode()

    def part_metadata(self, relative: str) -> dict[bytes, bytes]:
        """A part's schema metadata (its footer only), empty when the part does not exist."""
        full = self.path(relative)
        if not self.fs.exists(full):
            return {}
        with self.fs.open(full, "rb") as fh:
            return dict(pq.read_schema(fh).metadata or {})

    def write_part(self, relative: str, table: pa.Table, *, version: str) -> str:
        """Write a derived Parquet part (replacing a stale one: derived data is re-derivable)."""
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"crawl_assets.deriver": version.encode()})
        buf = io.BytesIO()
        pq.write_table(table, buf, compression="zstd")
        return self._write_atomic(relative, buf.getvalue(), overwrite=True)

    def write_part_chunks(self, relative: str, chunks: Iterable[pa.Table], schema: pa.Schema, *, version: str,
                          statistics: list[str] | None = None) -> int:
        """Write a derived Parquet part from a stream of tables (bounded memory), one row group per chunk, with
        min/max statistics for the ``statistics`` column paths only (all by default); returns rows written."""
        schema = schema.with_metadata({**(schema.metadata or {}), b"crawl_assets.deriver": version.encode()})
        final = self.path(relative)
        parent = final.rsplit("/", 1)[0]
        self._makedirs(parent)
        tmp = f"{parent}/{layout.temp_name()}"
        rows = 0
        try:
            with self._create(tmp) as fh, pq.ParquetWriter(
                    fh, schema, compression="zstd", write_statistics=True if statistics is None else statistics) as writer:
                for chunk in chunks:
                    writer.write_table(chunk.replace_schema_metadata(schema.metadata))
                    rows += chunk.num_rows
            self.fs.mv(tmp, final)
        except BaseException:
            if self.fs.exists(tmp):
                self.fs.rm(tmp)
            raise
        return rows

    def part_ids(self, table: str, tenant: str, platform: str, source: str) -> list[str]:
        """Batch ids of a source's parts, in collection order (nothing is read)."""
        base = self.path(layout.table_dir(table, tenant, platform, source))
        if not self.fs.exists(base):
            return []
        return [p.rsplit("/", 1)[1].removesuffix(".parquet") for p in sorted(self.fs.glob(f"{base}/*.parquet"))]

    def read_parts(self, table: str, tenant: str, platform: str, source: str, *, columns: list[str] | None = None,
                   include: Callable[[str], bool] | None = None) -> Iterator[tuple[str, pa.Table]]:
        """(batch id, table) for each part of a source, in collection order.

        ``columns`` reads only those columns (Parquet is columnar: a count of keys need not read the
        texts); ``include(batch_id)`` picks parts before any of them is read."""
        base = self.path(layout.table_dir(table, tenant, platform, source))
        if not self.fs.exists(base):
            return
        for full in sorted(self.fs.glob(f"{base}/*.parquet")):
            batch_id = full.rsplit("/", 1)[1].removesuffix(".parquet")
            if include is not None and not include(batch_id):
                continue
            with self.fs.open(full, "rb") as fh:
                yield batch_id, pq.read_table(fh, columns=columns)

    def iter_part_batches(self, relative: str, *, columns: list[str] | None = None, batch_size: int = 2_000,
                          use_threads: bool = True) -> Iterator[pa.RecordBatch]:
        """The rows of one part as record batches of at most ``batch_size`` rows (bounded memory: a part is
        never read whole); ``use_threads=False`` decodes on the caller's thread (less memory held). Not
        pre-buffered: Arrow's read cache keeps every column chunk read until the reader closes (the part's
        compressed columns, growing with it)."""
        with self.fs.open(self.path(relative), "rb") as fh:
            yield from pq.ParquetFile(fh, pre_buffer=False).iter_batches(batch_size=batch_size, columns=columns,
                                                                         use_threads=use_threads)

    def iter_part_row_groups(self, relative: str, *, columns: list[str] | None = None) -> Iterator[pa.Table]:
        """The row groups of one part in order, one table each (empty ones too); nothing when it does not exist."""
        full = self.path(relative)
        if not self.fs.exists(full):
            return
        with self.fs.open(full, "rb") as fh:
            reader = pq.ParquetFile(fh)
            for i in range(reader.num_row_groups):
                yield reader.read_row_group(i, columns=columns)

    # -- quarantine --------------------------------------------------------------------------
    def write_quarantine(self, tenant: str, platform: str, source: str, batch_id: str, rows: list[dict[str, Any]]) -> str | None:
        """Rejected input with its reason, one JSON line each; replaced when the batch is re-derived."""
        rel = layout.quarantine_file(tenant, platform, source, batch_id)
        if not rows:
            if self.fs.exists(self.path(rel)):
                self.fs.rm(self.path(rel))
            return None
        self._write_atomic(rel, b"".join(orjson.dumps(r) + b"\n" for r in rows), overwrite=True)
        return self.url(rel)
