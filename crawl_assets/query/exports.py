"""The filtered records as JSON lines, CSV or Parquet, streamed in bounded memory, each file recording the
query that produced it.

One point in time is opened first: the count in the header and every page come from that snapshot.
Pages (``PAGE`` records, only the chosen fields) are fetched by a background thread one page ahead of the
encoder, so Elasticsearch and the encoder work at the same time; at most ``PREFETCH`` pages wait.

* JSON lines: the first line is ``{"_export": {...}}`` (query, fields, snapshot count), then one record a line.
* CSV: the first line is ``# crawl_assets export {...}`` (the same object; read with ``skiprows=1``), then a
  header row; lists and objects are JSON in their cell, a missing value is empty; no cell is a formula
  (``csv_cells``).
* Parquet: the object is the file's key-value metadata ``crawl_assets.export``; strings, a UTC timestamp
  for ``created_at``/``edited_at``/``deleted_at``, lists of strings, objects as JSON text; row groups of
  ``ROW_GROUP`` rows, each sent as soon as it is written.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo


from crawl_assets.query.filters import RecordFilter, scoped_query
from crawl_assets.index.naming import parse_instant, read_alias
from crawl_assets.persian import jalali

MAX_EXPORT = 1_000_000
PAGE = 2000  # records per Elasticsearch page: with PREFETCH, bounds what waits as decoded dicts (~2.5 KB each)
PREFETCH = 1
ROW_GROUP = 4000  # two pages: peak RSS grows with it (server-equivalent process, 60k records: 167 MiB at 2k, 172 at 4k, 186 at 10k)
FORMATS = {"jsonl": "application/x-ndjson", "csv": "text/csv; charset=utf-8", "parquet": "application/vnd.apache.parquet",
           "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
EXTENSIONS = {"jsonl": "jsonl", "csv": "csv", "parquet": "parquet", "xlsx": "xlsx"}
CALENDARS = ("gregorian", "jalali")
STRINGS = ("key", "platform", "tenant", "source", "kind", "native_id", "author_id", "author_handle", "text",
           "text_clean", "lang", "reply_to", "quote_of", "repost_of", "conversation_id")
TIMES = ("created_at", "edited_at", "deleted_at")
LISTS = ("hashtags", "mentions", "urls")
OBJECTS = ("metrics", "media", "metadata", "provenance", "enrichment")
FIELDS: tuple[str, ...] = (*STRINGS, *TIMES, "deleted", *LISTS, *OBJECTS)
DEFAULT_FIELDS: tuple[str, ...] = ("key", "platform", "source", "kind", "author_id", "author_handle", "created_at",
                                   "lang", "text_clean", "text", "hashtags", "mentions", "urls", "reply_to",
                                   "quote_of", "repost_of", "conversation_id", "deleted")
ORDERS = {"oldest": [{"created_at": {"order": "asc", "missing": "_last"}}, {"key": "asc"}], "index": ["_shard_doc"]}


class ExportPlan:
    """An export prepared before the first byte is sent: the snapshot is open and counted, so a bad
    request or an unreachable index fails as an error answer, not as a truncated file."""

    def __init__(self, client: Any, tenant: str, flt: RecordFilter, fields: tuple[str, ...], fmt: str,
                 limit: int = MAX_EXPORT, order: str = "oldest", *, bom: bool = True, calendar: str = "gregorian",
                 time_zone: str = "Asia/Tehran") -> None:
        unknown = [f for f in fields if f not in FIELDS]
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(unknown)}; choose from {', '.join(FIELDS)}")
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
        if order not in ORDERS:
            raise ValueError(f"unknown order {order!r}; expected one of {', '.join(ORDERS)}")
        if not 1 <= limit <= MAX_EXPORT:
            raise ValueError(f"limit must be between 1 and {MAX_EXPORT}")
        if calendar not in CALENDARS:
            raise ValueError(f"unknown calendar {calendar!r}; expected one of {', '.join(CALENDARS)}")
        self.source_fields = tuple(fields)
        # calendar=jalali: each time field is followed by its Jalali date and time in ``time_zone``
        self.jalali = {f"{f}_jalali": f for f in fields if f in TIMES} if calendar == "jalali" else {}
        self.zone = ZoneInfo(time_zone)
        fields = tuple(x for f in fields for x in ((f, f"{f}_jalali") if f"{f}_jalali" in self.jalali else (f,)))
        self.client, self.tenant, self.flt, self.fields, self.fmt = client, tenant, flt, tuple(fields), fmt
        self.bom = bom
        self.limit, self.order = limit, order
        self.query = scoped_query(tenant, flt)
        self.pit: str | None = client.open_point_in_time(index=read_alias("records", tenant), keep_alive="2m",
                                                         ignore_unavailable=True)["id"]
        try:
            resp = client.search(pit={"id": self.pit, "keep_alive": "2m"}, size=0, query=self.query,
                                 track_total_hits=True)
        except Exception:
            self.close()
            raise
        self.matched = int(resp["hits"]["total"]["value"])
        self.header = {"version": 1, "tenant": tenant, "generated_at": datetime.now(timezone.utc).isoformat(),
                       "filter": flt.describe(), "fields": list(self.fields), "order": order, "limit": limit,
                       "matched": self.matched, "records": min(self.matched, limit),
                       "truncated": self.matched > limit}
        if self.jalali:
            self.header.update(calendar=calendar, time_zone=time_zone)

    def close(self) -> None:
        if self.pit:
            try:
                self.client.close_point_in_time(id=self.pit)
            except Exception:  # noqa: BLE001 - best effort: an expired point in time frees itself
                pass
            self.pit = None

    def _pages(self) -> Iterator[list[dict[str, Any]]]:
        sent, after = 0, None
        while sent < self.limit and self.pit:
            size = min(PAGE, self.limit - sent)
            resp = self.client.search(pit={"id": self.pit, "keep_alive": "2m"}, size=size, query=self.query,
                                      sort=ORDERS[self.order], search_after=after, source_includes=list(self.source_fields),
                                      track_total_hits=False, filter_path="pit_id,hits.hits._source,hits.hits.sort")
            self.pit = resp.get("pit_id", self.pit)
            hits = (resp.get("hits") or {}).get("hits") or []
            if hits:
                yield [self._with_jalali(h["_source"]) for h in hits] if self.jalali else [h["_source"] for h in hits]
            sent += len(hits)
            if len(hits) < size:
                return
            after = hits[-1]["sort"]

    def _with_jalali(self, doc: dict[str, Any]) -> dict[str, Any]:
        for name, field in self.jalali.items():
            value = doc.get(field)
            if value:
                local = parse_instant(value).astimezone(self.zone)
                doc[name] = f"{'%04d-%02d-%02d' % jalali.to_jalali(local.date())} {local:%H:%M:%S}"
        return doc

    def pages(self) -> Iterator[list[dict[str, Any]]]:
        """The snapshot's pages, fetched one ahead in a thread; the point in time is closed at the end."""
        box: queue.Queue = queue.Queue(maxsize=PREFETCH)
        stop = threading.Event()

        def offer(item: Any) -> bool:
            while not stop.is_set():
                try:
                    box.put(item, timeout=0.5)
                    return True
                except queue.Full:
                    continue
            return False

        def fetch() -> None:
            try:
                for page in self._pages():
                    if not offer(page):
                        return
                offer(None)
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
                offer(exc)

        worker = threading.Thread(target=fetch, name="export-prefetch", daemon=True)
        worker.start()
        try:
            while True:
                item = box.get()
                if item is None:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()
            worker.join(timeout=5)
            self.close()
