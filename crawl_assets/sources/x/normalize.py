"""X normalizers: ``x-v2`` (API v2 response pages with ``includes``, one page per line, as twarc2 writes
them) and ``x-archive`` (``tweets.js`` of an account archive).

Only the page's ``data`` tweets become records; ``includes`` supply the author handle, media details and
the full text of a retweeted post's original for context (included tweets are not emitted: they are
observed only partially). A long post's text is its ``note_tweet.text``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import IO, Annotated, Any, TypedDict

import ijson
import msgspec
import orjson

from crawl_assets.normalize.build import (
    GUARDED,
    Batch,
    InputError,
    Item,
    as_dict,
    as_id,
    as_list,
    iter_json_lines,
    media_doc,
    opt_int,
    opt_str,
    parse_instant,
)
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.lang import detect_lang, platform_lang
from crawl_assets.normalize.text import clean_text, fold_tag, unique

_METADATA_FIELDS = (
    "source",
    "possibly_sensitive",
    "reply_settings",
    "in_reply_to_user_id",
    "edit_history_tweet_ids",
    "withheld",
    "geo",
)


def tweet_key(tweet_id: str) -> str:
    """The record key of a post on X."""
    return f"x:{tweet_id}"


def normalize_v2(
    stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True, fast: bool = True
) -> Iterator[Item]:
    """Records from API v2 response pages, one JSON page per line (``data`` + ``includes``).

    ``fast`` parses each page with msgspec into only the fields mapped (see ``_fast_page``); ``fast=False``
    parses whole pages with orjson. Both give the same output (a property test holds them equal)."""
    batch = Batch("x-v2", name, context, validate=validate)
    for line, raw, page in iter_json_lines(stream, batch, _fast_page if fast else None):
        if isinstance(page, InputError):
            yield batch.reject(line, str(page), raw)
            continue
        if not isinstance(page, dict):
            yield batch.reject(line, "expected a JSON object (an API v2 response page)", raw)
            continue
        data = page.get("data")
        if isinstance(data, dict):  # a single-tweet lookup response
            data = [data]
        if not isinstance(data, list):
            if "data" in page or not page.get("errors") and not page.get("meta"):
                yield batch.reject(line, "field 'data': missing or not a list of tweets", raw)
            continue
        includes = _Includes(as_dict(page.get("includes")))
        collected = opt_str(as_dict(page.get("__twarc")).get("retrieved_at"))
        provenance = batch.provenance(line, _parse_iso(collected))
        for index, tweet in enumerate(data):  # batch.guard, inlined: this loop runs once per tweet
            try:
                item = _v2_tweet(batch, tweet, includes, provenance, index)
            except GUARDED as exc:
                item = batch.failure(line, tweet, exc)
            yield item


# --- Fast page decoding ---------------------------------------------------------------------------------
# A twarc2 page is ~3.5 KB per tweet, mostly fields no record needs (context annotations, user profiles,
# entity annotations). msgspec decoding into TypedDicts builds only the fields ``_v2_tweet`` reads, ~6x
# faster than building the whole page. The types are the documented happy shape; a page that does not fit
# them (wrong types, missing ``data``, out-of-range numbers) is parsed again by orjson and normalized
# (or rejected) by exactly the same code, so the fast path never changes a result, only its cost.
# Integers are bounded to int64 (orjson keeps those as integers); free-form values stay raw JSON for orjson.

_Int = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class _Tag(TypedDict, total=False):
    tag: str


class _Mention(TypedDict, total=False):
    username: str


class _Url(TypedDict, total=False):
    url: str
    expanded_url: str
    unwound_url: str
    media_key: str


class _Entities(TypedDict, total=False):
    hashtags: list[_Tag]
    mentions: list[_Mention]
    urls: list[_Url]
    cashtags: list[_Tag]


class _Note(TypedDict, total=False):
    text: str
    entities: _Entities


class _Reference(TypedDict, total=False):
    type: str
    id: str


class _Attachments(TypedDict, total=False):
    media_keys: list[str]
    poll_ids: msgspec.Raw


class _PublicMetrics(TypedDict, total=False):
    like_count: _Int
    retweet_count: _Int
    reply_count: _Int
    quote_count: _Int
    bookmark_count: _Int
    impression_count: _Int


class _Tweet(TypedDict, total=False):
    id: str
    text: str
    note_tweet: _Note
    entities: _Entities
    referenced_tweets: list[_Reference]
    author_id: str
    conversation_id: str
    created_at: str
    lang: str
    attachments: _Attachments
    public_metrics: _PublicMetrics
    source: str
    possibly_sensitive: bool
    reply_settings: str
    in_reply_to_user_id: str
    edit_history_tweet_ids: list[str]
    withheld: msgspec.Raw
    geo: msgspec.Raw


class _User(TypedDict, total=False):
    id: str
    username: str


class _Variant(TypedDict, total=False):
    bit_rate: _Int
    content_type: str
    url: str


class _MediaItem(TypedDict, total=False):
    media_key: str
    type: str
    url: str
    preview_image_url: str
    width: _Int
    height: _Int
    duration_ms: _Int
    variants: list[_Variant]


class _Referenced(TypedDict, total=False):
    id: str
    text: str


class _PageIncludes(TypedDict, total=False):
    users: list[_User]
    media: list[_MediaItem]
    tweets: list[_Referenced]


class _Twarc(TypedDict, total=False):
    retrieved_at: str


_Page = TypedDict("_Page", {"data": list[_Tweet], "includes": _PageIncludes, "__twarc": _Twarc}, total=False)
_PAGE_DECODER = msgspec.json.Decoder(_Page)
_RAW_TWEET_FIELDS = ("withheld", "geo")


def _fast_page(raw: bytes) -> dict[str, Any] | None:
    """The page with only the mapped fields, or None when it does not fit the happy shape."""
    try:
        page = _PAGE_DECODER.decode(raw)
    except (msgspec.DecodeError, RecursionError):  # includes ValidationError; too deep: orjson reports it
        return None
    if "data" not in page:
        return None
    try:
        for tweet in page["data"]:
            for field in _RAW_TWEET_FIELDS:
                if field in tweet:
                    tweet[field] = orjson.loads(bytes(tweet[field]))  # type: ignore[literal-required]
            attachments = tweet.get("attachments")
            if attachments is not None and "poll_ids" in attachments:
                attachments["poll_ids"] = orjson.loads(bytes(attachments["poll_ids"]))  # type: ignore[typeddict-item]
    except orjson.JSONDecodeError:
        return None
    return page  # type: ignore[return-value]


class _Includes:
    """Lookup tables of one page's ``includes`` (built once per page)."""

    def __init__(self, includes: dict[str, Any]) -> None:
        self.users = _by_id(includes.get("users"), "id")
        self.media = _by_id(includes.get("media"), "media_key")
        self.tweets = _by_id(includes.get("tweets"), "id")


def _by_id(items: Any, key: str) -> dict[str, dict[str, Any]]:
    """Includes that can be looked up, by id: objects whose id is a string (a list or object there is bad input)."""
    table: dict[str, dict[str, Any]] = {}
    if isinstance(items, list):
        for item in items:
            if isinstance(item, dict):
                item_id = item.get(key)
                if isinstance(item_id, str):
                    table[item_id] = item
    return table


def _v2_tweet(batch: Batch, tweet: Any, includes: _Includes, provenance: dict[str, Any], index: int) -> Item:
    """One ``data`` tweet. The hot path of ``crawl-assets normalize``: it builds the record document
    directly in ``Record`` field order (no intermediate dict) and touches only the fields it maps."""
    if type(tweet) is not dict:
        raise InputError(f"data[{index}]: not a JSON object")
    get = tweet.get
    tweet_id = get("id")
    if type(tweet_id) is not str or not tweet_id.isdigit():
        raise InputError(f"field 'data[{index}].id': missing or not a numeric tweet id")
    note = get("note_tweet")
    if type(note) is dict and type(note.get("text")) is str:
        text, entities = note["text"], note.get("entities")
    else:
        text, entities = get("text"), get("entities")
    if type(text) is not str:
        raise InputError(f"field 'data[{index}].text': missing or not a string")
    if type(entities) is not dict:
        entities = _EMPTY
    reply_to = quote_of = repost_of = None
    references = get("referenced_tweets")
    if references:
        for ref in as_list(references):
            ref_id = ref.get("id") if type(ref) is dict else None
            if type(ref_id) is str and ref_id.isdigit():
                ref_type = ref.get("type")
                if ref_type == "replied_to":
                    reply_to = "x:" + ref_id
                elif ref_type == "quoted":
                    quote_of = "x:" + ref_id
                elif ref_type == "retweeted":
                    repost_of = "x:" + ref_id
    kind = "repost" if repost_of else "quote" if quote_of else "reply" if reply_to else "post"
    author_id = get("author_id")
    if type(author_id) is not str:
        author_id = None
    author = includes.users.get(author_id)
    handle = author.get("username") if author is not None else None
    conversation = get("conversation_id")
    metadata = {}
    for field in _METADATA_FIELDS:
        value = get(field)
        if value is not None:
            metadata[field] = value
    raw_lang = get("lang")
    if raw_lang is not None:
        metadata["x_lang"] = raw_lang
    if repost_of:
        original = includes.tweets.get(repost_of[2:])
        if original is not None and type(original.get("text")) is str:
            metadata["repost_text"] = original["text"]
    attachments = get("attachments")
    media: list[dict[str, Any]] = []
    if type(attachments) is dict:
        if attachments.get("poll_ids"):
            metadata["poll_ids"] = attachments["poll_ids"]
        media = [_v2_media(k, includes) for k in as_list(attachments.get("media_keys")) if type(k) is str]
    cashtags = _strings(entities.get("cashtags"), "tag")
    if cashtags:
        metadata["cashtags"] = cashtags
    metrics = get("public_metrics")
    if type(metrics) is not dict:
        metrics = _EMPTY
    lang = platform_lang(raw_lang)
    created_at = parse_instant(get("created_at"), f"data[{index}].created_at")
    return batch.emit(
        {
            "key": "x:" + tweet_id,
            "platform": "x",
            "tenant": batch.context.tenant,
            "source": batch.context.source,
            "kind": kind,
            "native_id": tweet_id,
            "author_id": author_id,
            "author_handle": handle if type(handle) is str else None,
            "created_at": created_at,
            "edited_at": None,
            "deleted": False,
            "deleted_at": None,
            "text": text,
            "text_clean": clean_text(text),
            "lang": lang if lang is not None else detect_lang(text),
            "reply_to": reply_to,
            "quote_of": quote_of,
            "repost_of": repost_of,
            "conversation_id": "x:" + conversation if type(conversation) is str and conversation.isdigit() else None,
            "hashtags": unique([fold_tag(tag) for tag in _strings(entities.get("hashtags"), "tag")]),
            "mentions": unique([fold_tag(handle) for handle in _strings(entities.get("mentions"), "username")]),
            "urls": _v2_urls(entities.get("urls")),
            "media": media,
            "metrics": {
                "likes": _count(metrics.get("like_count")),
                "reposts": _count(metrics.get("retweet_count")),
                "replies": _count(metrics.get("reply_count")),
                "quotes": _count(metrics.get("quote_count")),
                "views": _count(metrics.get("impression_count")),
                "forwards": None,
                "bookmarks": _count(metrics.get("bookmark_count")),
                "reactions": None,
            },
            "metadata": metadata,
            "provenance": provenance,
            "enrichment": {},
        }
    )


def _count(value: Any) -> int | None:
    return value if type(value) is int else opt_int(value)


_EMPTY: dict[str, Any] = {}


def _strings(items: Any, field: str) -> list[str]:
    """``item[field]`` of the entity objects in ``items`` whose ``field`` is a string (others are skipped)."""
    found: list[str] = []
    if isinstance(items, list):
        for item in items:
            if type(item) is dict:
                value = item.get(field)
                if type(value) is str:
                    found.append(value)
    return found


def _v2_urls(items: Any) -> list[str]:
    """The expanded links of ``entities.urls``, first-seen order; media links (with a ``media_key``) left out."""
    return unique([_expanded(u) for u in as_list(items) if type(u) is dict and not u.get("media_key")])


def _expanded(url: dict[str, Any]) -> str:
    for field in ("unwound_url", "expanded_url", "url"):
        if isinstance(url.get(field), str) and url[field]:
            return url[field]
    return ""


def _v2_media(media_key: str, includes: _Includes) -> dict[str, Any]:
    media = as_dict(includes.media.get(media_key))
    variants = [v for v in as_list(media.get("variants")) if isinstance(v, dict) and isinstance(v.get("url"), str)]
    best = max(variants, key=lambda v: opt_int(v.get("bit_rate")) or 0, default={})
    duration_ms = opt_int(media.get("duration_ms"))
    return media_doc(
        type=opt_str(media.get("type")) or "unknown",
        id=media_key,
        mime=opt_str(best.get("content_type")),
        width=opt_int(media.get("width")),
        height=opt_int(media.get("height")),
        duration=duration_ms / 1000 if duration_ms is not None else None,
        url=opt_str(media.get("url")) or opt_str(best.get("url")) or opt_str(media.get("preview_image_url")),
    )


def _parse_iso(value: str | None) -> datetime | None:
    """twarc's ``retrieved_at``, or None when absent or not an instant (it only fills provenance)."""
    try:
        return parse_instant(value, "__twarc.retrieved_at") if value else None
    except InputError:
        return None


# --- Account archive tweets.js ------------------------------------------------------------------------

_ARCHIVE_PREFIX = re.compile(rb"^\s*window\.YTD\.[\w.]+\s*=\s*")
_ARCHIVE_DATE = "%a %b %d %H:%M:%S %z %Y"


class _SkipPrefix:
    """A binary reader that skips the ``window.YTD.tweets.part0 =`` assignment so ijson sees the array."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        head = stream.read(256)
        match = _ARCHIVE_PREFIX.match(head)
        self.head = head
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
    """Records from an account archive's ``tweets.js`` (streamed; ``line`` is the tweet's ordinal)."""
    batch = Batch("x-archive", name, context, validate=validate)
    ordinal = 0
    reader = _SkipPrefix(stream)
    if not reader.starts_array():
        yield batch.reject(1, "not a tweets.js: expected 'window.YTD.tweets.part0 = [' or a JSON array", reader.head)
        return
    try:
        for ordinal, item in enumerate(ijson.items(reader, "item", use_float=True), start=1):
            yield batch.guard(ordinal, item, _archive_tweet, batch, ordinal, item)
    except (ijson.JSONError, UnicodeDecodeError) as exc:  # invalid UTF-8 is invalid JSON too
        yield batch.reject(ordinal + 1, "invalid JSON, rest of file skipped: " + " ".join(str(exc).split())[:200])


def _archive_tweet(batch: Batch, ordinal: int, item: Any) -> Item:
    tweet = as_dict(item).get("tweet", item)
    if not isinstance(tweet, dict):
        raise InputError("item is not a JSON object with a 'tweet'")
    tweet_id = as_id(tweet.get("id_str") or tweet.get("id"), "tweet.id_str")
    if not tweet_id.isdigit():
        raise InputError("field 'tweet.id_str': not a numeric tweet id")
    text = tweet.get("full_text", tweet.get("text"))
    if not isinstance(text, str):
        raise InputError("field 'tweet.full_text': missing or not a string")
    try:
        created = datetime.strptime(str(tweet.get("created_at")), _ARCHIVE_DATE).astimezone(timezone.utc)
    except ValueError as exc:
        raise InputError(f"field 'tweet.created_at': not an archive date: {tweet.get('created_at')!r}"[:200]) from exc
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
    return batch.finish(
        {
            "key": tweet_key(tweet_id),
            "platform": "x",
            "kind": kind,
            "native_id": tweet_id,
            "author_id": None,
            "author_handle": None,
            "created_at": created,
            "text": text,
            "lang": platform_lang(tweet.get("lang")),
            "reply_to": reply_to,
            "quote_of": quote_of,
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
    media = as_dict(media)
    variants = [v for v in as_list(as_dict(media.get("video_info")).get("variants")) if isinstance(v, dict)]
    best = max(variants, key=lambda v: opt_int(v.get("bitrate")) or 0, default={})
    return media_doc(
        type=opt_str(media.get("type")) or "unknown",
        id=opt_str(media.get("id_str")),
        mime=opt_str(best.get("content_type")),
        url=opt_str(best.get("url")) or opt_str(media.get("media_url_https")),
    )
