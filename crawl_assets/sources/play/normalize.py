"""Google Play normalizers: ``play`` (``reviews.list`` pages in an envelope with the package name) and
``play-csv`` (the Play Console review export, UTF-16 or UTF-8).

A review is ``play:{package}:{review_id}`` (kind ``review``); the developer's reply to it is
``play:{package}:{review_id}:reply`` (kind ``reply``, ``reply_to`` the review), so replies become
relations. A Console export's row of a rating without a review (no text, title, reply or link) is a counted
non-post. Rating, app version, device, OS and the reviewer's device language go to ``metadata``
(``reviewer_language``: not the text's language, which is detected from the text); thumbs-up count to
``metrics.likes``. The API gives a review's last modification only, so ``created_at`` is that instant
there (``metadata.time_is_last_modified``); the CSV gives both submit and update times.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from crawl_assets.normalize.build import (
    Batch, InputError, Item, as_dict, as_id, as_list, crawl_field, from_unix, normalize_envelopes, opt_int, opt_str,
    parse_instant,
)
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.persons import PersonIds
from crawl_assets.normalize.reading import LongLine, Prefixed, capped_text_lines, line_cap

# Reviews carry no stable author id (only authorName): erase a reviewer with --author-name. Developer replies
# (author_id "developer:<package>") are the app owner's, not a person's: erase them with --source.
PERSONS = PersonIds()

REVIEW_ID_IN_LINK = re.compile(r"review[iI]d=([^&#\s]+)")
_CSV_HEADER = re.compile(r"^\ufeff?\"?Package Name\"?,")


def sniff_csv(head: bytes, line: dict[str, Any] | None) -> bool:
    """A Play Console review export starts with its ``Package Name`` column (UTF-16 with a BOM, or UTF-8)."""
    utf16 = head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
    return bool(_CSV_HEADER.match(head[:400].decode("utf-16" if utf16 else "utf-8", "replace")))


def review_key(package: str, review_id: str) -> str:
    return f"play:{package}:{review_id}"


def _split_title(text: str) -> tuple[str | None, str]:
    """The API joins an optional title and the body with a tab."""
    title, sep, body = text.partition("\t")
    return (title.strip() or None, body.strip()) if sep else (None, text.strip())


def _review(batch: Batch, package: str, review_id: str, *, author: str | None, text: str, created: datetime,
            edited: datetime | None, metadata: dict[str, Any], likes: int | None, lang: str | None,
            provenance: dict[str, Any]) -> Item:
    key = review_key(package, review_id)
    return batch.finish({
        "key": key, "platform": "play", "kind": "review", "native_id": review_id,
        "author_handle": author, "created_at": created, "edited_at": edited, "text": text, "lang": lang,
        "conversation_id": key, "metrics": {"likes": likes},
        "metadata": {"package": package, **{k: v for k, v in metadata.items() if v not in (None, "", {})}},
        "provenance": provenance,
    })


def _reply(batch: Batch, package: str, review_id: str, text: str, at: datetime, lang: str | None,
           provenance: dict[str, Any]) -> Item:
    """The developer's answer (its language detected from its own text, not the review's)."""
    key = review_key(package, review_id)
    return batch.finish({
        "key": f"{key}:reply", "platform": "play", "kind": "reply", "native_id": f"{review_id}:reply",
        "author_id": f"developer:{package}", "author_handle": None, "created_at": at, "text": text, "lang": lang,
        "reply_to": key, "conversation_id": key, "metadata": {"package": package, "developer_reply": True},
        "provenance": provenance,
    })


# -- reviews.list pages --------------------------------------------------------------------------------

def normalize_reviews(stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True) -> Iterator[Item]:
    """Reviews (and developer replies) of ``reviews.list`` pages, one envelope per line."""
    batch = Batch("play", name, context, validate=validate)

    def read(line: int, raw: bytes, crawl: dict[str, Any], response: Any, provenance: dict[str, Any]) -> Iterator[Item]:
        package = crawl_field(crawl, "package")
        if not isinstance(response, dict):
            raise InputError("field 'response': not a reviews.list answer")
        for index, review in enumerate(as_list(response.get("reviews"))):
            yield from _api_review(batch, line, package, review, index, provenance)

    return normalize_envelopes(stream, batch, read)


def _modified(comment: dict[str, Any], field: str) -> datetime:
    stamp = as_dict(comment.get("lastModified"))
    seconds = opt_int(stamp.get("seconds"))
    if seconds is None:
        raise InputError(f"field '{field}.lastModified.seconds': missing")
    return from_unix(seconds + (opt_int(stamp.get("nanos")) or 0) / 1e9, f"{field}.lastModified")


def _api_review(batch: Batch, line: int, package: str, review: Any, index: int, provenance: dict[str, Any]) -> Iterator[Item]:
    review = as_dict(review)
    try:
        review_id = as_id(review.get("reviewId"), f"reviews[{index}].reviewId")
        comments = [as_dict(c) for c in as_list(review.get("comments"))]
        user = next((as_dict(c["userComment"]) for c in comments if "userComment" in c), None)
        if user is None:
            raise InputError(f"reviews[{index}]: no userComment")
        created = _modified(user, f"reviews[{index}].userComment")
    except InputError as exc:
        yield batch.reject(line, str(exc), review)
        return
    title, text = _split_title(opt_str(user.get("text")) or "")
    metadata = {
        "rating": opt_int(user.get("starRating")),
        "app_version_code": opt_int(user.get("appVersionCode")),
        "app_version_name": opt_str(user.get("appVersionName")),
        "device": opt_str(user.get("device")),
        "device_metadata": as_dict(user.get("deviceMetadata")),
        "android_os_version": opt_int(user.get("androidOsVersion")),
        "reviewer_language": opt_str(user.get("reviewerLanguage")),
        "thumbs_down": opt_int(user.get("thumbsDownCount")),
        "title": title,
        "original_text": opt_str(user.get("originalText")),
        "time_is_last_modified": True,
    }
    yield batch.guard(line, review, lambda: _review(
        batch, package, review_id, author=opt_str(review.get("authorName")), text=text, created=created, edited=None,
        metadata=metadata, likes=opt_int(user.get("thumbsUpCount")), lang=None,
        provenance=provenance))
    for comment in comments:
        dev = as_dict(comment.get("developerComment"))
        if dev:
            yield batch.guard(line, dev, lambda d=dev: _reply(
                batch, package, review_id, opt_str(d.get("text")) or "", _modified(d, f"reviews[{index}].developerComment"),
                None, provenance))


# -- Play Console CSV export -----------------------------------------------------------------------------

def _text_stream(stream: IO[bytes]) -> io.TextIOWrapper:
    """The export is UTF-16 (with BOM) from the Console's bucket; re-saved files are often UTF-8."""
    head = stream.read(4)
    encoding = "utf-16" if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else "utf-8-sig"
    joined = io.BufferedReader(Prefixed(head, stream))  # type: ignore[arg-type]
    return io.TextIOWrapper(joined, encoding=encoding, errors="replace", newline="")


def _csv_instant(row: dict[str, str], millis_col: str, text_col: str) -> datetime | None:
    millis = (row.get(millis_col) or "").strip()
    if millis.isdigit():
        return from_unix(int(millis) / 1000, millis_col)
    text = (row.get(text_col) or "").strip()
    return parse_instant(text, text_col) if text else None


def normalize_csv(stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True) -> Iterator[Item]:
    """Reviews and developer replies of a Play Console review export (one row per review)."""
    batch = Batch("play-csv", name, context, validate=validate)
    cap = line_cap(context.method, context.max_line_bytes)
    long_lines: list[LongLine] = []  # lines over the cap, read through unkept
    reader = csv.DictReader(capped_text_lines(_text_stream(stream), cap, long_lines))
    missing = {"Package Name", "Review Text", "Star Rating"} - set(reader.fieldnames or [])
    if missing:
        yield from (batch.reject(line.line, line.reason(cap), line.head) for line in long_lines)
        yield batch.reject(1, f"not a Play Console review export: missing columns {', '.join(sorted(missing))}")
        return
    while True:
        try:
            row = next(reader)
        except StopIteration:
            row = None
        except csv.Error as exc:  # e.g. a cell over the csv module's field limit: reject the row, go on
            yield batch.reject(reader.line_num, f"unreadable CSV row: {exc}")
            continue
        for line in long_lines:
            yield batch.reject(line.line, line.reason(cap), line.head)
        long_lines.clear()
        if row is None:
            return
        yield from batch_row(batch, reader.line_num, row)


RATING_ONLY = "rating without a review (stars only: no text, title, reply or link)"
_WORDS = ("Review Text", "Review Title", "Developer Reply Text", "Review Link")


def batch_row(batch: Batch, line: int, row: dict[str, str]) -> Iterator[Item]:
    if not any((row.get(column) or "").strip() for column in _WORDS):  # Play writes a row per rating too
        yield batch.reject(line, RATING_ONLY, ",".join(f"{k}={v}" for k, v in row.items() if v)[:500], error=False)
        return
    try:
        package = as_id(row.get("Package Name"), "Package Name")
        match = REVIEW_ID_IN_LINK.search(row.get("Review Link") or "")
        if not match:
            raise InputError("column 'Review Link': no reviewId in it (the export row cannot be keyed)")
        review_id = match.group(1)
        created = _csv_instant(row, "Review Submit Millis Since Epoch", "Review Submit Date and Time")
        if created is None:
            raise InputError("column 'Review Submit Date and Time': missing")
        updated = _csv_instant(row, "Review Last Update Millis Since Epoch", "Review Last Update Date and Time")
        replied = _csv_instant(row, "Developer Reply Millis Since Epoch", "Developer Reply Date and Time")
    except InputError as exc:
        yield batch.reject(line, str(exc), ",".join(f"{k}={v}" for k, v in row.items() if v)[:500])
        return
    provenance = batch.provenance(line)
    metadata = {
        "rating": opt_int((row.get("Star Rating") or "").strip()),
        "app_version_code": opt_int((row.get("App Version Code") or "").strip()),
        "app_version_name": opt_str((row.get("App Version Name") or "").strip()),
        "device": opt_str((row.get("Device") or "").strip()),
        "reviewer_language": opt_str((row.get("Reviewer Language") or "").strip()),
        "title": opt_str((row.get("Review Title") or "").strip()),
        "review_link": opt_str((row.get("Review Link") or "").strip()),
    }
    yield batch.guard(line, row, lambda: _review(
        batch, package, review_id, author=None, text=(row.get("Review Text") or "").strip(), created=created,
        edited=updated if updated and updated > created else None, metadata=metadata, likes=None,
        lang=None, provenance=provenance))
    reply_text = (row.get("Developer Reply Text") or "").strip()
    if reply_text and replied is not None:
        yield batch.guard(line, row, lambda: _reply(batch, package, review_id, reply_text, replied, None, provenance))
