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
from typing import IO, Annotated, Any

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
    parse_json,
    media_doc,
    opt_int,
    opt_str,
    parse_instant,
)
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.persons import PersonIds
from crawl_assets.normalize.lang import detect_lang, platform_lang
from crawl_assets.normalize.text import clean_text, fold_tag, unique
from crawl_assets.sources.x.ids import id_time

PERSONS = PersonIds(  # a post's author is its author_id (the normalizer's author_id); users are in includes
    owner_keys=("author_id",), containers=("users", "mentions", "user_mentions"),
    reference_keys=("in_reply_to_user_id", "in_reply_to_user_id_str"),
)


def tweet_key(tweet_id: str) -> str:
    """The record key of a post on X."""
    return f"x:{tweet_id}"


def normalize_v2(
    stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True, fast: bool = True
) -> Iterator[Item]:
    """Records from API v2 response pages, one JSON page per line (``data`` + ``includes``).

    ``fast`` decodes each page with msgspec straight into the structs the record is built from (see
    ``_fast_page``); ``fast=False`` parses whole pages with orjson and coerces each tweet into the same
    structs (``_coerce_tweet``). Both give the same output (a property test holds them equal)."""
    batch = Batch("x-v2", name, context, validate=validate)
    for line, raw, page in iter_json_lines(stream, batch, _fast_page if fast else None):
        if type(page) is _Page:
            items = _fast_items(batch, line, page)
            if items is not None:
                yield from items
                continue
            page = parse_json(raw)  # a tweet is rejected: the slow path quotes it whole in the rejection
        if isinstance(page, InputError):
            yield batch.reject(line, str(page), raw)
            continue
        if not isinstance(page, dict):
            yield batch.reject(line, "expected a JSON object (an API v2 response page)", raw)
            continue
        if page.get("_") == DELETED:
            try:
                yield _deletion(batch, line, page)
            except GUARDED as exc:
                yield batch.failure(line, page, exc)
            continue
        data = page.get("data")
        if isinstance(data, dict):  # a single-tweet lookup response
            data = [data]
        if not isinstance(data, list):
            if "data" in page or not page.get("errors") and not page.get("meta"):
                yield batch.reject(line, "field 'data': missing or not a list of tweets", raw)
            continue
        includes = _Includes.parsed(as_dict(page.get("includes")))
        collected = opt_str(as_dict(page.get("__twarc")).get("retrieved_at"))
        provenance = batch.provenance(line, _parse_iso(collected))
        for index, tweet in enumerate(data):
            try:
                item = _v2_tweet(batch, _coerce_tweet(tweet), includes, provenance, index)
            except GUARDED as exc:
                item = batch.failure(line, tweet, exc)
            yield item


SNOWFLAKE_START = 29_700_859_247  # the first id X issued as a snowflake (2010-11-04)
DELETED = "crawl_assets.deleted"  # a line the collector writes when a refresh lookup no longer finds a post


def _deletion(batch: Batch, line: int, mark: dict[str, Any]) -> Item:
    """A post the collector's refresh no longer found by id: a bare tombstone (``created_at`` from the
    id's own timestamp), which ``normalized_records`` merges onto the post's last full observation."""
    post_id = as_id(mark.get("id"), "id")
    observed = parse_instant(mark.get("observed_at"), "observed_at")
    # snowflake ids (since late 2010) carry their creation time; older or odd ids fall back to the observation
    created = id_time(post_id) if post_id.isdigit() and int(post_id) > SNOWFLAKE_START else observed
    key = tweet_key(post_id)
    return batch.finish({
        "key": key, "platform": "x", "kind": "post", "native_id": post_id, "author_id": None,
        "created_at": created, "deleted": True, "deleted_at": observed, "text": "", "conversation_id": None,
        "metadata": {"tombstone": True, "reason": opt_str(mark.get("reason"))},
        "provenance": batch.provenance(line),
    })


def _fast_items(batch: Batch, line: int, page: _Page) -> list[Item] | None:
    """The records of a decoded page, or None when a tweet is rejected (the page then goes the slow way)."""
    includes = _Includes.decoded(page.includes)
    provenance = batch.provenance(line, _parse_iso(page.twarc.retrieved_at if page.twarc is not None else None))
    items: list[Item] = []
    try:
        for index, tweet in enumerate(page.data or ()):
            items.append(_v2_tweet(batch, tweet, includes, provenance, index))
    except GUARDED:
        return None
    return items


# --- The tweet as it is read ----------------------------------------------------------------------------
# A twarc2 page is ~3.5 KB per tweet, mostly fields no record needs (context annotations, user profiles,
# entity annotations). msgspec decodes a page straight into these structs, building only the fields the
# record needs (~4x faster than building the whole page with orjson; struct fields are cheaper to read
# than dict keys). The types are the documented happy shape; a page that does not fit them (wrong types,
# missing ``data``, out-of-range numbers) is parsed by orjson and each tweet coerced into the same structs
# by the rules the record contract sets for odd input (``_coerce_tweet``), so one builder (``_v2_tweet``)
# serves both and the fast path never changes a result, only its cost. Integers are bounded to int64
# (orjson keeps those as integers); free-form values (``geo``, ``withheld``, ``poll_ids``) are kept as raw
# JSON and parsed by orjson. The coerced structs may hold the raw value of a field the builder checks
# itself (ids, text, times, metadata), whatever its JSON type.

_Int = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
_ABSENT = msgspec.Raw()


class _Tag(msgspec.Struct, gc=False):
    tag: str | None = None


class _Mention(msgspec.Struct, gc=False):
    username: str | None = None


class _Url(msgspec.Struct, gc=False):
    url: str | None = None
    expanded_url: str | None = None
    unwound_url: str | None = None
    media_key: str | None = None  # coerced: the raw value (only its truth counts)


class _Entities(msgspec.Struct, gc=False):
    hashtags: list[_Tag] = []
    mentions: list[_Mention] = []
    urls: list[_Url] = []
    cashtags: list[_Tag] = []


class _Note(msgspec.Struct, gc=False):
    text: str | None = None
    entities: _Entities | None = None


class _Reference(msgspec.Struct, gc=False):
    type: str | None = None
    id: str | None = None


class _Attachments(msgspec.Struct, gc=False):
    media_keys: list[str] = []
    poll_ids: msgspec.Raw = _ABSENT  # raw JSON when decoded, then parsed by ``_fast_page``


class _PublicMetrics(msgspec.Struct, gc=False):
    like_count: _Int | None = None
    retweet_count: _Int | None = None
    reply_count: _Int | None = None
    quote_count: _Int | None = None
    bookmark_count: _Int | None = None
    impression_count: _Int | None = None


class _Tweet(msgspec.Struct, gc=False):
    id: str | None = None
    text: str | None = None
    note_tweet: _Note | None = None
    entities: _Entities | None = None
    referenced_tweets: list[_Reference] | None = None
    author_id: str | None = None
    conversation_id: str | None = None
    created_at: str | None = None
    lang: str | None = None
    attachments: _Attachments | None = None
    public_metrics: _PublicMetrics | None = None
    source: str | None = None
    possibly_sensitive: bool | None = None
    reply_settings: str | None = None
    in_reply_to_user_id: str | None = None
    edit_history_tweet_ids: list[str] | None = None
    withheld: msgspec.Raw = _ABSENT  # raw JSON when decoded, then parsed by ``_fast_page``
    geo: msgspec.Raw = _ABSENT


class _User(msgspec.Struct, gc=False):
    id: str | None = None
    username: str | None = None


class _Variant(msgspec.Struct, gc=False):
    bit_rate: _Int | None = None
    content_type: str | None = None
    url: str | None = None


class _MediaItem(msgspec.Struct, gc=False):
    media_key: str | None = None
    type: str | None = None
    url: str | None = None
    preview_image_url: str | None = None
    width: _Int | None = None
    height: _Int | None = None
    duration_ms: _Int | None = None
    variants: list[_Variant] = []


class _Referenced(msgspec.Struct, gc=False):
    id: str | None = None
    text: str | None = None


class _PageIncludes(msgspec.Struct, gc=False):
    users: list[_User] = []
    media: list[_MediaItem] = []
    tweets: list[_Referenced] = []


class _Twarc(msgspec.Struct, gc=False):
    retrieved_at: str | None = None


class _Page(msgspec.Struct, gc=False):
    data: list[_Tweet] | None = None
    includes: _PageIncludes | None = None
    twarc: _Twarc | None = msgspec.field(default=None, name="__twarc")


_PAGE_DECODER = msgspec.json.Decoder(_Page)
_NO_ENTITIES = _Entities()
_NO_METRICS = _PublicMetrics()
_NO_MEDIA = _MediaItem()


def _fast_page(raw: bytes) -> _Page | None:
    """The page decoded into the structs, or None when it does not fit them (or has no ``data``)."""
    try:
        page = _PAGE_DECODER.decode(raw)
    except (msgspec.DecodeError, RecursionError):  # includes ValidationError; too deep: orjson reports it
        return None
    if page.data is None:
        return None
    try:
        for tweet in page.data:
            tweet.withheld = _raw_value(tweet.withheld)
            tweet.geo = _raw_value(tweet.geo)
            if tweet.attachments is not None:
                tweet.attachments.poll_ids = _raw_value(tweet.attachments.poll_ids)
    except orjson.JSONDecodeError:
        return None
    return page


def _raw_value(raw: msgspec.Raw) -> Any:
    return orjson.loads(bytes(raw)) if raw else None  # an absent field is the empty Raw


class _Includes:
    """Lookup tables of one page's ``includes`` (built once per page): author handles, media, tweet texts."""

    __slots__ = ("handles", "media", "texts")

    def __init__(self, handles: dict[str, str | None], media: dict[str, _MediaItem], texts: dict[str, str | None]):
        self.handles = handles
        self.media = media
        self.texts = texts

    @classmethod
    def decoded(cls, includes: _PageIncludes | None) -> _Includes:
        """The tables of decoded includes (items without an id cannot be looked up)."""
        if includes is None:
            return cls({}, {}, {})
        return cls(
            {u.id: u.username for u in includes.users if u.id is not None},
            {m.media_key: m for m in includes.media if m.media_key is not None},
            {t.id: t.text for t in includes.tweets if t.id is not None},
        )

    @classmethod
    def parsed(cls, includes: dict[str, Any]) -> _Includes:
        """The tables of parsed includes: objects whose id is a string (a list or object there is bad input)."""
        return cls(
            {i: _str(u.get("username")) for i, u in _by_id(includes.get("users"), "id").items()},
            {i: _coerce_media(m) for i, m in _by_id(includes.get("media"), "media_key").items()},
            {i: _str(t.get("text")) for i, t in _by_id(includes.get("tweets"), "id").items()},
        )


def _by_id(items: Any, key: str) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    if isinstance(items, list):
        for item in items:
            if isinstance(item, dict):
                item_id = item.get(key)
                if isinstance(item_id, str):
                    table[item_id] = item
    return table


def _str(value: Any) -> str | None:
    return value if type(value) is str else None


def _coerce_tweet(tweet: Any) -> Any:
    """A parsed ``data`` item as the ``_Tweet`` a fitting one decodes into: values of the wrong type become
    absent, lists keep their well-formed items, counters take digit strings; not an object: as it is."""
    if type(tweet) is not dict:
        return tweet
    get = tweet.get
    note = get("note_tweet")
    references = get("referenced_tweets")
    attachments = get("attachments")
    metrics = get("public_metrics")
    return _Tweet(
        id=get("id"),
        text=get("text"),
        note_tweet=_Note(note["text"], _coerce_entities(note.get("entities")))
        if type(note) is dict and type(note.get("text")) is str else None,
        entities=_coerce_entities(get("entities")),
        referenced_tweets=[_Reference(r.get("type"), r.get("id")) for r in as_list(references) if type(r) is dict]
        if references else None,
        author_id=get("author_id"),
        conversation_id=get("conversation_id"),
        created_at=get("created_at"),
        lang=get("lang"),
        attachments=_Attachments([k for k in as_list(attachments.get("media_keys")) if type(k) is str],
                                 attachments.get("poll_ids")) if type(attachments) is dict else None,
        public_metrics=_PublicMetrics(*(_count(metrics.get(f)) for f in _PublicMetrics.__struct_fields__))
        if type(metrics) is dict else None,
        source=get("source"),
        possibly_sensitive=get("possibly_sensitive"),
        reply_settings=get("reply_settings"),
        in_reply_to_user_id=get("in_reply_to_user_id"),
        edit_history_tweet_ids=get("edit_history_tweet_ids"),
        withheld=get("withheld"),
        geo=get("geo"),
    )  # fmt: skip


def _coerce_entities(entities: Any) -> _Entities | None:
    if type(entities) is not dict:
        return None
    get = entities.get
    urls = [
        _Url(_str(u.get("url")), _str(u.get("expanded_url")), _str(u.get("unwound_url")), u.get("media_key"))
        for u in as_list(get("urls")) if type(u) is dict
    ]  # fmt: skip
    return _Entities(
        [_Tag(t) for t in _strings(get("hashtags"), "tag")],
        [_Mention(h) for h in _strings(get("mentions"), "username")],
        urls,
        [_Tag(t) for t in _strings(get("cashtags"), "tag")],
    )


def _coerce_media(media: dict[str, Any]) -> _MediaItem:
    variants = [
        _Variant(opt_int(v.get("bit_rate")), opt_str(v.get("content_type")), v["url"])
        for v in as_list(media.get("variants")) if isinstance(v, dict) and isinstance(v.get("url"), str)
    ]  # fmt: skip
    return _MediaItem(
        media.get("media_key"), opt_str(media.get("type")), opt_str(media.get("url")),
        opt_str(media.get("preview_image_url")), opt_int(media.get("width")), opt_int(media.get("height")),
        opt_int(media.get("duration_ms")), variants,
    )  # fmt: skip


def _v2_tweet(batch: Batch, tweet: Any, includes: _Includes, provenance: dict[str, Any], index: int) -> Item:
    """One ``data`` tweet (a ``_Tweet``; anything else was not an object). The hot path of ``crawl-assets
    normalize``: it builds the record document directly in ``Record`` field order (no intermediate dict)."""
    if type(tweet) is not _Tweet:
        raise InputError(f"data[{index}]: not a JSON object")
    tweet_id = tweet.id
    if type(tweet_id) is not str or not tweet_id.isdigit():
        raise InputError(f"field 'data[{index}].id': missing or not a numeric tweet id")
    note = tweet.note_tweet
    if note is not None and type(note.text) is str:
        text, entities = note.text, note.entities
    else:
        text, entities = tweet.text, tweet.entities
    if type(text) is not str:
        raise InputError(f"field 'data[{index}].text': missing or not a string")
    if entities is None:
        entities = _NO_ENTITIES
    reply_to = quote_of = repost_of = None
    for ref in tweet.referenced_tweets or ():
        ref_id = ref.id
        if type(ref_id) is str and ref_id.isdigit():
            ref_type = ref.type
            if ref_type == "replied_to":
                reply_to = "x:" + ref_id
            elif ref_type == "quoted":
                quote_of = "x:" + ref_id
            elif ref_type == "retweeted":
                repost_of = "x:" + ref_id
    kind = "repost" if repost_of else "quote" if quote_of else "reply" if reply_to else "post"
    author_id = tweet.author_id
    if type(author_id) is not str:
        author_id = None
    conversation = tweet.conversation_id
    metadata: dict[str, Any] = {}  # the tweet's fields without a common one, present ones in this order
    if tweet.source is not None:
        metadata["source"] = tweet.source
    if tweet.possibly_sensitive is not None:
        metadata["possibly_sensitive"] = tweet.possibly_sensitive
    if tweet.reply_settings is not None:
        metadata["reply_settings"] = tweet.reply_settings
    if tweet.in_reply_to_user_id is not None:
        metadata["in_reply_to_user_id"] = tweet.in_reply_to_user_id
    if tweet.edit_history_tweet_ids is not None:
        metadata["edit_history_tweet_ids"] = tweet.edit_history_tweet_ids
    if tweet.withheld is not None:
        metadata["withheld"] = tweet.withheld
    if tweet.geo is not None:
        metadata["geo"] = tweet.geo
    raw_lang = tweet.lang
    if raw_lang is not None:
        metadata["x_lang"] = raw_lang
    if repost_of:
        original = includes.texts.get(repost_of[2:])
        if original is not None:
            metadata["repost_text"] = original
    attachments = tweet.attachments
    media: list[dict[str, Any]] = []
    if attachments is not None:
        if attachments.poll_ids:
            metadata["poll_ids"] = attachments.poll_ids
        media = [_v2_media(key, includes) for key in attachments.media_keys]
    if entities.cashtags:
        cashtags = [c.tag for c in entities.cashtags if c.tag is not None]
        if cashtags:
            metadata["cashtags"] = cashtags
    metrics = tweet.public_metrics or _NO_METRICS
    hashtags, mentions, urls = entities.hashtags, entities.mentions, entities.urls
    lang = platform_lang(raw_lang)
    try:
        created_at = parse_instant(tweet.created_at, "created_at")
    except InputError:  # again, for the message naming the tweet (not formatted for every tweet)
        created_at = parse_instant(tweet.created_at, f"data[{index}].created_at")
    return batch.emit(
        {
            "key": "x:" + tweet_id,
            "platform": "x",
            "tenant": batch.context.tenant,
            "source": batch.context.source,
            "kind": kind,
            "native_id": tweet_id,
            "author_id": author_id,
            "author_handle": includes.handles.get(author_id),  # type: ignore[arg-type]
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
            "hashtags": unique([fold_tag(h.tag) for h in hashtags if h.tag is not None]) if hashtags else [],
            "mentions": unique([fold_tag(m.username) for m in mentions if m.username is not None]) if mentions else [],
            "urls": unique([u.unwound_url or u.expanded_url or u.url or "" for u in urls if not u.media_key])
            if urls else [],
            "media": media,
            "metrics": {
                "likes": metrics.like_count,
                "reposts": metrics.retweet_count,
                "replies": metrics.reply_count,
                "quotes": metrics.quote_count,
                "views": metrics.impression_count,
                "forwards": None,
                "bookmarks": metrics.bookmark_count,
                "reactions": None,
            },
            "metadata": metadata,
            "provenance": provenance,
            "enrichment": {},
        }
    )


def _count(value: Any) -> int | None:
    return value if type(value) is int else opt_int(value)


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


def _expanded(url: dict[str, Any]) -> str:
    for field in ("unwound_url", "expanded_url", "url"):
        if isinstance(url.get(field), str) and url[field]:
            return url[field]
    return ""


def _v2_media(media_key: str, includes: _Includes) -> dict[str, Any]:
    media = includes.media.get(media_key, _NO_MEDIA)
    best = max((v for v in media.variants if v.url is not None), key=_bit_rate, default=None)
    duration_ms = media.duration_ms
    return media_doc(
        type=media.type or "unknown",
        id=media_key,
        mime=(best.content_type or None) if best is not None else None,
        width=media.width,
        height=media.height,
        duration=duration_ms / 1000 if duration_ms is not None else None,
        url=media.url or (best.url if best is not None else None) or media.preview_image_url or None,
    )


def _bit_rate(variant: _Variant) -> int:
    return variant.bit_rate or 0


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
