"""X account archive data files (format ``x-archive``): ``tweets.js`` and the other kinds whose meaning
the normalizer knows, streamed one item at a time."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import IO, Any

import ijson

from crawl_assets.normalize.build import (
    Batch, InputError, Item, as_dict, as_id, as_list, media_doc, opt_int, opt_str, parse_instant,
)  # fmt: skip
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.damage import parse_error_text
from crawl_assets.normalize.documents import document_items, ijson_items
from crawl_assets.normalize.lang import platform_lang
from crawl_assets.normalize.text import fold_tag, unique
from crawl_assets.sources.x.normalize import tweet_key, unescape_entities
from crawl_assets.sources.x.normalize_structs import _strings

_ARCHIVE_PREFIX = re.compile(rb"^\s*window\.YTD\.(\w+)\.part\d+\s*=\s*")
_ARCHIVE_DATE = "%a %b %d %H:%M:%S %z %Y"
# The data files whose items are posts: kind (the name in window.YTD.<kind>.part0) -> what a record means.
# tweet.js is the name archives used before 2022; deleted-tweets.js holds posts the owner deleted.
POST_FILES = {"tweets": "live", "tweet": "live", "community_tweet": "live", "deleted_tweets": "deleted"}


def sniff_archive(head: bytes, line: dict[str, Any] | None) -> bool:
    """An account archive's data file starts with its ``window.YTD.<name>.part<n> =`` assignment."""
    return head.lstrip().startswith(b"window.YTD.")


class _SkipPrefix:
    """A binary reader that skips the ``window.YTD.<kind>.part0 =`` assignment so ijson sees the array."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        head = stream.read(256)
        match = _ARCHIVE_PREFIX.match(head)
        self.head = head
        self.kind = match.group(1).decode() if match else "tweets"  # a bare JSON array is read as tweets
        self._pending = head[match.end() :] if match else head

    def starts_array(self) -> bool:
        """Whether the content (after the assignment) is a JSON array."""
        return self._pending.lstrip()[:1] == b"["

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson probes the stream type with read(0)
            return b""
        if self._pending:
            chunk, self._pending = self._pending, b""
            return chunk
        return self._stream.read(size)


def normalize_archive(
    stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True
) -> Iterator[Item]:
    """Records from an account archive's post files (``tweets.js``, ``deleted-tweets.js``, ...), streamed;
    ``line`` is the post's ordinal. Other data files (likes, followers, messages) are refused by kind."""
    batch = Batch("x-archive", name, context, validate=validate)
    ordinal = 0
    reader = _SkipPrefix(stream)
    if reader.kind not in POST_FILES:
        file_name = reader.kind.replace("_", "-") + ".js"
        yield batch.reject(None, f"this is the archive's {reader.kind!r} file ({file_name}), which holds no posts: "
                                 f"x-archive reads {', '.join(k.replace('_', '-') + '.js' for k in POST_FILES)}",
                           reader.head)  # fmt: skip
        return
    if not reader.starts_array():
        yield batch.reject(1, "not a tweets.js: expected 'window.YTD.tweets.part0 = [' or a JSON array", reader.head)
        return
    deleted = POST_FILES[reader.kind] == "deleted"
    try:
        for ordinal, item in document_items(batch, ijson_items(reader, "item")):
            yield batch.guard(ordinal, item, _archive_tweet, batch, ordinal, item, deleted)
    except (ijson.JSONError, UnicodeDecodeError) as exc:
        yield batch.reject(ordinal + 1, "invalid JSON, rest of file skipped: " + parse_error_text(exc))


def _archive_time(value: Any, field: str) -> datetime:
    """An archive time: ``Thu May 02 11:00:00 +0000 2024`` (tweets) or ISO 8601 (``editableUntil``, some exports)."""
    try:
        return datetime.strptime(str(value), _ARCHIVE_DATE).astimezone(timezone.utc)
    except ValueError:
        try:
            return parse_instant(value, field)
        except InputError:
            raise InputError(f"field '{field}': not an archive date: {value!r}"[:200]) from None


def _edit_history(edit_info: Any) -> list[str] | None:
    """The ids of every version of an edited post, oldest first (``edit_info.initial.editTweetIds`` on the
    original, ``edit_info.edit.editControlInitial.editTweetIds`` on an edit)."""
    info = as_dict(edit_info)
    control = as_dict(info.get("initial")) or as_dict(as_dict(info.get("edit")).get("editControlInitial"))
    ids = [i for i in as_list(control.get("editTweetIds")) if isinstance(i, str) and i.isdigit()]
    return ids or None


def _archive_tweet(batch: Batch, ordinal: int, item: Any, deleted: bool = False) -> Item:
    tweet = as_dict(item).get("tweet", item)
    if not isinstance(tweet, dict):
        raise InputError("item is not a JSON object with a 'tweet'")
    tweet_id = as_id(tweet.get("id_str") or tweet.get("id"), "tweet.id_str")
    if not tweet_id.isdigit():
        raise InputError("field 'tweet.id_str': not a numeric tweet id")
    text = tweet.get("full_text", tweet.get("text"))
    if not isinstance(text, str):
        raise InputError("field 'tweet.full_text': missing or not a string")
    created = _archive_time(tweet.get("created_at"), "tweet.created_at")
    deleted_at = _archive_time(tweet["deleted_at"], "tweet.deleted_at") if deleted and tweet.get("deleted_at") else None
    entities = as_dict(tweet.get("entities"))
    extended = as_dict(tweet.get("extended_entities"))
    reply_id = opt_str(tweet.get("in_reply_to_status_id_str"))
    quoted_id = opt_str(tweet.get("quoted_status_id_str"))
    is_retweet = text.startswith("RT @")
    reply_to = tweet_key(reply_id) if reply_id and reply_id.isdigit() else None
    quote_of = tweet_key(quoted_id) if quoted_id and quoted_id.isdigit() else None
    kind = "repost" if is_retweet else "quote" if quote_of else "reply" if reply_to else "post"
    metadata = {
        f: tweet[f] for f in ("source", "in_reply_to_screen_name", "in_reply_to_user_id_str", "possibly_sensitive")
        if tweet.get(f) is not None
    }
    if tweet.get("lang") is not None:
        metadata["x_lang"] = tweet["lang"]
    if isinstance(tweet.get("edit_info"), dict):
        metadata["edit_info"] = tweet["edit_info"]
        history = _edit_history(tweet["edit_info"])
        if history:
            metadata["edit_history_tweet_ids"] = history
    return batch.finish(
        {
            "key": tweet_key(tweet_id),
            "platform": "x",
            "kind": kind,
            "native_id": tweet_id,
            "author_id": batch.context.account_id,  # the archive's owner (account.js, or the account_id option)
            "author_handle": None,
            "created_at": created,
            "deleted": deleted,
            "deleted_at": deleted_at,
            "text": text,
            "search_text": unescape_entities(text),
            "lang": platform_lang(tweet.get("lang")),
            "reply_to": reply_to,
            "quote_of": quote_of,
            # the thread root: the post itself unless it replies (the archive does not name a reply's root)
            "conversation_id": None if reply_to else tweet_key(tweet_id),
            "hashtags": unique([fold_tag(tag) for tag in _strings(entities.get("hashtags"), "text")]),
            "mentions": unique([fold_tag(handle) for handle in _strings(entities.get("user_mentions"), "screen_name")]),
            "urls": unique([_expanded(u) for u in as_list(entities.get("urls")) if isinstance(u, dict)]),
            "media": [_archive_media(m) for m in as_list(extended.get("media") or entities.get("media"))],
            "metrics": {
                "likes": opt_int(tweet.get("favorite_count")),
                "reposts": opt_int(tweet.get("retweet_count")),
            },
            "metadata": metadata,
            "provenance": batch.provenance(ordinal),
        }
    )


def _archive_media(media: Any) -> dict[str, Any]:
    """A photo, video or GIF of the post: the archive writes its numbers as strings ("1080", "30030")."""
    media = as_dict(media)
    video = as_dict(media.get("video_info"))
    variants = [v for v in as_list(video.get("variants")) if isinstance(v, dict)]
    best = max(variants, key=lambda v: opt_int(v.get("bitrate")) or 0, default={})
    width, height = _largest_size(media)
    millis = opt_int(video.get("duration_millis"))
    return media_doc(
        type=opt_str(media.get("type")) or "unknown",
        id=opt_str(media.get("id_str")),
        mime=opt_str(best.get("content_type")),
        width=width,
        height=height,
        duration=millis / 1000 if millis is not None else None,
        url=opt_str(best.get("url")) or opt_str(media.get("media_url_https")),
    )


def _largest_size(media: dict[str, Any]) -> tuple[int | None, int | None]:
    """Width and height of the media as uploaded: ``original_info`` when given, else the largest of ``sizes``."""
    original = as_dict(media.get("original_info"))
    if opt_int(original.get("width")) and opt_int(original.get("height")):
        return opt_int(original["width"]), opt_int(original["height"])
    sizes = [(opt_int(s.get("w")), opt_int(s.get("h"))) for s in as_dict(media.get("sizes")).values() if isinstance(s, dict)]
    found = [(w, h) for w, h in sizes if w and h]
    return max(found, key=lambda s: s[0] * s[1]) if found else (None, None)


def _expanded(url: dict[str, Any]) -> str:
    for field in ("unwound_url", "expanded_url", "url"):
        if isinstance(url.get(field), str) and url[field]:
            return url[field]
    return ""
