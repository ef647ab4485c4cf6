"""What the lake does per area, so no module outside the lake spells an area's path or reaches its filesystem:
which tenants and sources hold data, a source's or a tenant's folders removed, the erasure log, dead-letter
files, expired files. Paths come from ``layout``; file access from ``Lake``'s checked primitives."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson

from crawl_assets.lake import layout

if TYPE_CHECKING:
    from typing import IO


class LakeAreas:
    """Area operations of ``crawl_assets.lake.store.Lake`` (a mixin over its relative-path primitives)."""

    if TYPE_CHECKING:  # Lake's primitives
        def glob(self, pattern: str) -> list[str]: ...
        def exists(self, relative: str) -> bool: ...
        def read_bytes(self, relative: str, size: int = -1) -> bytes | None: ...
        def write_bytes(self, relative: str, data: bytes, *, overwrite: bool = True) -> str: ...
        def remove(self, *relative: str) -> int: ...
        def remove_tree(self, relative: str) -> bool: ...
        def url(self, relative: str) -> str: ...
        def path(self, relative: str) -> str: ...
        def open_read(self, relative: str) -> IO[bytes]: ...
        def open_write(self, relative: str) -> IO[bytes]: ...
        def move(self, relative: str, target: str) -> None: ...

    # -- tenants and sources ----------------------------------------------------------------
    def tenants(self) -> list[str]:
        """Tenants with raw data (collected, or landed by webhooks)."""
        return sorted({rel.rsplit("/", 1)[-1] for area in (layout.RAW, layout.LANDING)
                       for rel in self.glob(f"{area}/*")})

    def tenant_sources(self, tenant: str) -> list[tuple[str, str]]:
        """(platform, source) of every source of ``tenant`` with raw data (collected, or landed by webhooks)."""
        found = set()
        for area in (layout.RAW, layout.LANDING):
            for rel in self.glob(layout.source_dir(area, tenant, "*", "*")):
                platform, source = rel.split("/")[-2:]
                found.add((platform, source))
        return sorted(found)

    def has_tenant_data(self, tenant: str) -> bool:
        """Whether any folder of ``tenant`` holds something (its erasure log aside)."""
        log = layout.erasure_dir(tenant)
        return any(self.glob(folder) for folder in layout.tenant_folders(tenant) if folder != log)

    def remove_source(self, tenant: str, platform: str, source: str) -> None:
        """Every folder of one source (its areas and its tables) removed."""
        for folder in layout.source_folders(tenant, platform, source):
            for rel in self.glob(folder):
                self.remove_tree(rel)

    def remove_tenant(self, tenant: str) -> list[str]:
        """Every folder of ``tenant`` removed: its areas, tables, features and dead letters (its erasure log
        stays); the removed folders' filesystem paths."""
        tenant = layout.segment(tenant)
        patterns = [f"{area}/{tenant}" for area in layout.SOURCE_AREAS] + [
            f"{layout.TABLES}/*/{tenant}", f"{layout.FEATURES}/*/{tenant}", layout.deadletter_dir("*", "*", tenant),
            f"{layout.DISCOVERY}/{tenant}"]
        removed = []
        for pattern in patterns:
            for rel in self.glob(pattern):
                self.remove_tree(rel)
                removed.append(self.path(rel))
        return removed

    # -- derived files of one batch ----------------------------------------------------------
    def remove_batch(self, tenant: str, platform: str, source: str, batch_id: str, *, raw: bool,
                     tables: tuple[str, ...] = (), marker: bool = True) -> int:
        """A batch's files removed: its raw data and manifest (``raw``), its parts of ``tables``, its quarantine
        file and (``marker``) its index marker; how many existed."""
        files = [layout.raw_file(tenant, platform, source, batch_id),
                 layout.raw_manifest(tenant, platform, source, batch_id)] if raw else []
        files += [f"{layout.table_dir(t, tenant, platform, source)}/{batch_id}.parquet" for t in tables]
        files.append(layout.quarantine_file(tenant, platform, source, batch_id))
        if marker:
            files.append(layout.index_marker(tenant, platform, source, batch_id))
        return self.remove(*files)

    # -- the erasure log ---------------------------------------------------------------------
    def append_erasure_log(self, tenant: str, entry: dict[str, Any]) -> str:
        """Append one entry (rewriting the small log atomically); returns the log's location."""
        rel = layout.erasure_log(tenant)
        old = self.read_bytes(rel) or b""
        self.write_bytes(rel, old + orjson.dumps(entry) + b"\n")
        return self.url(rel)

    def read_erasure_log(self, tenant: str) -> list[dict[str, Any]]:
        data = self.read_bytes(layout.erasure_log(tenant)) or b""
        return [orjson.loads(line) for line in data.splitlines() if line.strip()]

    # -- dead letters ------------------------------------------------------------------------
    def deadletter_files(self, tenant: str | None = None, family: str | None = None, *,
                         replayed: bool = False) -> list[str]:
        """Dead-letter files (relative), pending ones or (``replayed``) those kept after a replay, oldest first
        (their names start with a UTC stamp)."""
        area = layout.DEADLETTER_REPLAYED if replayed else layout.DEADLETTER_PENDING
        return sorted(self.glob(f"{layout.deadletter_dir(area, family or '*', tenant or '*')}/*.jsonl"),
                      key=lambda rel: rel.rsplit("/", 1)[-1])

    def remove_interrupted_rewrites(self, tenant: str) -> int:
        """Rewrites of a tenant's dead-letter files a crash interrupted (the original is still in place)."""
        return self.remove(*self.glob(f"{layout.deadletter_dir('*', '*', tenant)}/*.jsonl.erasing"))

    def replace_file(self, relative: str, data: bytes) -> None:
        """Replace a file's content atomically in its folder (``{name}.erasing``, then a rename over it), or
        remove it when ``data`` is empty."""
        if not data.strip():
            self.remove(relative)
            return
        tmp = f"{relative}.erasing"
        with self.open_write(tmp) as fh:
            fh.write(data)
        self.move(tmp, relative)

    # -- expiry ------------------------------------------------------------------------------
    def expire(self, pattern: str, when: Callable[[str], datetime | None], cutoff: datetime) -> int:
        """Remove the files matching ``pattern`` whose time (``when`` of the relative path) is before ``cutoff``."""
        gone = 0
        for rel in self.glob(pattern):
            stamp = when(rel)
            if stamp is not None and stamp < cutoff:
                gone += self.remove(rel)
        return gone

    def files(self, pattern: str) -> Iterator[tuple[str, bytes]]:
        """(relative path, bytes) of each file matching ``pattern``, in path order."""
        for rel in self.glob(pattern):
            data = self.read_bytes(rel)
            if data is not None:
                yield rel, data
