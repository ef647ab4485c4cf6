"""Kill points: SIGKILL the current process at the n-th call of a named step of a sync.

Each site wraps one function so that it counts its calls and, at the chosen one, kills the process
(before the call, or right after it returns). The wrapped function is otherwise untouched: same
arguments, same result, same exceptions. Only the crash harness arms them, in a forked child process
(``zygote.py``); the site name is appended to ``CRAWL_FAULT_LOG`` just before the kill, so the harness
knows which point fired.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Predicate = Callable[[tuple[Any, ...], dict[str, Any]], bool]


def _always(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return True


def _arg(i: int, name: str) -> Callable[[tuple[Any, ...], dict[str, Any]], str]:
    return lambda a, k: str(k.get(name, a[i] if len(a) > i else ""))


def _contains(i: int, name: str, text: str, suffix: str = "") -> Predicate:
    get = _arg(i, name)
    return lambda a, k: text in get(a, k) and get(a, k).endswith(suffix)


def _event_type(wanted: str) -> Predicate:
    def check(a: tuple[Any, ...], k: dict[str, Any]) -> bool:
        event = k.get("event", a[1] if len(a) > 1 else None)
        dagster_event = getattr(event, "dagster_event", None)
        return dagster_event is not None and dagster_event.event_type_value == wanted

    return check


def _file_path(text: str, suffix: str = "") -> Predicate:
    """The method's object (``self``, an open file) is at a path holding ``text`` (and ending in ``suffix``)."""
    return lambda a, k: text in str(getattr(a[0], "path", "")) and str(getattr(a[0], "path", "")).endswith(suffix)


@dataclass(frozen=True)
class Site:
    """Where a kill point sits: ``module``, ``attr`` (``Class.method`` or a module function), when, which calls."""

    module: str
    attr: str
    when: str  # "before" | "after"
    stage: str  # fetch | lake | normalize | index | instance
    match: Predicate = _always


SITES: dict[str, Site] = {
    # fetch
    "x.request": Site("crawl_assets.sources.x.client", "XClient.get", "before", "fetch"),
    "x.response": Site("crawl_assets.sources.x.client", "XClient.get", "after", "fetch"),
    "telegram.request": Site("crawl_assets.sources.telegram.client", "CrawlClient.__call__", "before", "fetch"),
    "telegram.response": Site("crawl_assets.sources.telegram.client", "CrawlClient.__call__", "after", "fetch"),
    "telegram.refresh_window": Site("crawl_assets.sources.telegram.sink", "LakeSink.save_window", "before", "fetch"),
    # lake writes
    "lake.raw_tmp_written": Site("fsspec.implementations.local", "LocalFileSystem.mv", "before", "lake",
                                 _contains(2, "path2", "/raw/", ".jsonl.gz")),
    "lake.raw_without_manifest": Site("crawl_assets.lake.store", "Lake._write_atomic", "before", "lake",
                                      _contains(1, "relative", "raw/", ".meta.json")),
    "lake.raw_committed": Site("crawl_assets.lake.store", "Lake.write_raw_batch", "after", "lake"),
    # lake writes on S3 (no rename: an object appears whole when its upload completes; a move is copy + delete)
    "s3.raw_upload": Site("s3fs.core", "S3File._upload_chunk", "before", "lake", _file_path("/raw/")),
    "s3.raw_copied": Site("s3fs.core", "S3FileSystem._cp_file", "after", "lake",
                          _contains(2, "path2", "/raw/", ".jsonl.gz")),
    "s3.part_upload": Site("s3fs.core", "S3File._upload_chunk", "before", "normalize",
                           _file_path("/tables/normalized_records/")),
    "s3.marker_copied": Site("s3fs.core", "S3FileSystem._cp_file", "after", "index",
                             _contains(2, "path2", "/index_state/", ".done")),
    "checkpoint.before_save": Site("crawl_assets.orchestration.partition_state", "ObservationCheckpointer.save", "before", "lake"),
    "checkpoint.saved": Site("crawl_assets.orchestration.partition_state", "ObservationCheckpointer.save", "after", "lake"),
    # normalization
    "normalize.start": Site("crawl_assets.pipeline.normalize.stage", "normalize_batch", "before", "normalize"),
    "normalize.done": Site("crawl_assets.pipeline.normalize.stage", "normalize_batch", "after", "normalize"),
    "normalize.part_write": Site("crawl_assets.lake.store", "Lake.write_part_chunks", "before", "normalize",
                                 _contains(1, "relative", "tables/normalized_records/")),
    "normalize.part_written": Site("crawl_assets.lake.store", "Lake.write_part_chunks", "after", "normalize",
                                   _contains(1, "relative", "tables/normalized_records/")),
    "normalize.quarantine": Site("crawl_assets.lake.store", "Lake.write_quarantine", "before", "normalize"),
    "edges.read_records": Site("crawl_assets.pipeline.relate.stage", "latest_views", "before", "normalize"),
    "edges.part_write": Site("crawl_assets.lake.store", "Lake.write_part", "before", "normalize",
                             _contains(1, "relative", "tables/relation_edges/")),
    "edges.summary_write": Site("crawl_assets.lake.store", "Lake.write_part", "before", "normalize",
                                _contains(1, "relative", "tables/author_hashtag/")),
    # indexing
    "index.pending": Site("crawl_assets.pipeline.index.stage", "pending_records", "before", "index"),
    "index.setup": Site("crawl_assets.pipeline.index.stage", "setup_indices", "before", "index"),
    "index.bulk_send": Site("crawl_assets.index.bulk_send", "BulkSender._request", "before", "index"),
    "index.bulk_applied": Site("crawl_assets.index.bulk_send", "BulkSender._request", "after", "index"),
    "index.count": Site("crawl_assets.pipeline.index.stage", "count_documents", "before", "index"),
    "index.marker": Site("crawl_assets.lake.store", "Lake.write_bytes", "before", "index",
                         _contains(1, "relative", "index_state/")),
    "index.marker_written": Site("crawl_assets.lake.store", "Lake.write_bytes", "after", "index",
                                 _contains(1, "relative", "index_state/")),
    # the Dagster instance (event log)
    "instance.materialization_event": Site("dagster._core.instance", "DagsterInstance.handle_new_event", "before",
                                           "instance", _event_type("ASSET_MATERIALIZATION")),
}


def _die(site: str, n: int) -> None:
    log = os.environ.get("CRAWL_FAULT_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{site}@{n}\n")
    os.kill(os.getpid(), signal.SIGKILL)


def _wrap(fn: Callable[..., Any], name: str, site: Site, n: int) -> Callable[..., Any]:
    calls = [0]

    def hit(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        if not site.match(args, kwargs):
            return False
        calls[0] += 1
        return calls[0] == n

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def awrapper(*args: Any, **kwargs: Any) -> Any:
            due = hit(args, kwargs)
            if due and site.when == "before":
                _die(name, n)
            result = await fn(*args, **kwargs)
            if due:
                _die(name, n)
            return result

        return awrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        due = hit(args, kwargs)
        if due and site.when == "before":
            _die(name, n)
        result = fn(*args, **kwargs)
        if due:
            _die(name, n)
        return result

    return wrapper


def arm(name: str, n: int) -> None:
    """Kill this process at the ``n``-th matching call of site ``name`` (see ``SITES``)."""
    site = SITES[name]
    owner: Any = importlib.import_module(site.module)
    *path, attr = site.attr.split(".")
    for part in path:
        owner = getattr(owner, part)
    setattr(owner, attr, _wrap(getattr(owner, attr), name, site, n))
