"""Posts X names in a page's ``errors`` instead of returning them: deleted, protected or suspended.

A lookup of ids that no longer resolve answers ``{"errors": [{"resource_type": "tweet", "parameter": "ids",
"resource_id": "…", "type": ".../resource-not-found", ...}]}`` (with or without ``data`` for the ids that
did resolve). Each such error is evidence about that post, recorded as a bare observation of its key
(docs/SCHEMA.md, "Deletions"): ``metadata.unavailable`` says why (``not_found``: deleted or never existed,
``not_authorized``: protected, ``suspended``: its author is suspended, ``unavailable``: any other reason),
``metadata.x_error`` keeps X's own words, and only ``not_found`` marks the post deleted. Errors about
expansion objects (a referenced post, a user) are context of the page, not observations of a requested
post, and produce nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from crawl_assets.normalize.build import Batch, InputError, Item
from crawl_assets.normalize.damage import with_flag
from crawl_assets.sources.x.ids import id_time

SNOWFLAKE_START = 29_700_859_247  # the first id X issued as a snowflake (2010-11-04)
CREATED_FROM_ID = "created_at_from_id"
_REQUESTED = {"ids", "id"}


def snowflake_time(post_id: str, field: str) -> datetime:
    """The creation time a snowflake id carries; an older or odd id has none (InputError naming ``field``)."""
    if post_id.isdigit() and int(post_id) > SNOWFLAKE_START and len(post_id) <= 20:
        return id_time(post_id)
    raise InputError(f"field '{field}': missing, and id {post_id!r} is not a snowflake a time can be derived from "
                     "(request tweet.fields=created_at)")


def unavailable_reason(error: dict[str, Any]) -> str:
    kind = str(error.get("type") or "").rsplit("/", 1)[-1]
    detail = str(error.get("detail") or "").lower()
    if "suspended" in detail:
        return "suspended"
    if kind == "resource-not-found":
        return "not_found"
    if kind == "not-authorized-for-resource":
        return "not_authorized"
    return "unavailable"


def names_a_post(error: Any) -> bool:
    """Whether an ``errors`` item is about a requested post (not an expansion, not the request itself)."""
    if not isinstance(error, dict) or not isinstance(error.get("parameter"), str):
        return False
    return (error.get("resource_type") == "tweet" and error["parameter"] in _REQUESTED
            and error.get("section", "data") == "data" and isinstance(error.get("resource_id"), str)
            and error["resource_id"].isdigit())  # fmt: skip


def unavailable_items(batch: Batch, line: int, errors: Any, provenance: dict[str, Any],
                      found: set[str]) -> Iterator[Item]:  # fmt: skip
    """One bare observation per post an ``errors`` list names (ids also returned in ``data`` are skipped)."""
    if not isinstance(errors, list):
        return
    observed = provenance["collected_at"]
    for error in errors:
        if not names_a_post(error) or error["resource_id"] in found:
            continue
        post_id = error["resource_id"]
        why = unavailable_reason(error)
        try:
            created = snowflake_time(post_id, "resource_id")
        except InputError:
            if observed is None:
                yield batch.reject(line, f"post {post_id} is {why.replace('_', ' ')} but neither its id nor the "
                                         "page tells a time to record it at", error)
                continue
            created, stamped = observed, provenance
        else:
            stamped = with_flag(provenance, CREATED_FROM_ID)
        yield batch.finish({
            "key": f"x:{post_id}", "platform": "x", "kind": "post", "native_id": post_id, "author_id": None,
            "created_at": created, "deleted": why == "not_found", "deleted_at": observed if why == "not_found" else None,
            "text": "", "conversation_id": None,
            "metadata": {"tombstone": True, "unavailable": why,
                         "x_error": {k: error[k] for k in ("title", "detail", "type") if isinstance(error.get(k), str)}},
            "provenance": stamped,
        })  # fmt: skip


def error_page_reason(errors: Any) -> str:
    """A readable reason for a page that holds errors and no post at all (e.g. a rejected request)."""
    first = errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], dict) else {}
    words = [str(first.get(k)) for k in ("title", "detail", "message") if first.get(k)]
    return "X answered with errors and no posts" + (": " + " - ".join(words) if words else "")
