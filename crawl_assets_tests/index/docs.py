"""Synthetic documents shaped like ``Record.model_dump(mode="json")`` and edges, for index tests."""

from __future__ import annotations

from typing import Any


def record(i: int, tenant: str, *, month: int = 1, year: int = 2026, source: str = "s1", text: str | None = None,
           edited_at: str | None = None, collected_at: str = "2026-11-01T00:00:00Z", deleted: bool = False,
           deleted_at: str | None = None, hashtags: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    """One X-like record created on day ``1 + i % 27`` of the month."""
    doc: dict[str, Any] = {
        "key": f"x:{1000 + i}", "platform": "x", "tenant": tenant, "source": source, "kind": "post",
        "native_id": str(1000 + i), "author_id": str(i % 7), "author_handle": f"user{i % 7}",
        "created_at": f"{year:04d}-{month:02d}-{1 + i % 27:02d}T10:00:00Z", "edited_at": edited_at,
        "deleted": deleted, "deleted_at": deleted_at,
        "text": text if text is not None else f"سلام دنیا #{i % 5} پست شماره {i}",
        "text_clean": text if text is not None else f"سلام دنیا پست شماره {i}",
        "lang": "fa" if i % 4 else "en", "reply_to": None, "quote_of": None, "repost_of": None,
        "conversation_id": f"x:{1000 + i}", "hashtags": hashtags if hashtags is not None else [f"tag{i % 5}"],
        "mentions": [], "urls": [], "media": [{"type": "photo", "id": f"m{i}", "mime": "image/jpeg", "size": 1234,
                                               "width": 10, "height": 20, "duration": None, "url": None}],
        "metrics": {"likes": i, "reposts": 0, "replies": 1, "quotes": None, "views": 10 * i, "forwards": None,
                    "bookmarks": None, "reactions": {"❤": 2}},
        "metadata": {"possibly_sensitive": False, "entities": {"cashtags": []}},
        "provenance": {"collected_at": collected_at, "method": "api", "source": source, "format": "x-v2",
                       "run_id": "run-1", "raw_pointer": "raw/x/s1/batch.jsonl.gz", "raw_line": i + 1},
        "enrichment": {},
    }
    doc.update(extra)
    return doc


def edge(i: int, tenant: str, created_at: str | None = "2026-02-03T00:00:00Z", type_: str = "reply") -> dict[str, Any]:
    return {"type": type_, "src": f"x:{2000 + i}", "dst": f"x:{1000 + i}", "created_at": created_at,
            "platform": "x", "tenant": tenant}
