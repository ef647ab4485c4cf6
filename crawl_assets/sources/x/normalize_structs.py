"""The X API v2 page as it is read: msgspec structs of the fields a record needs, and the coercion of a
parsed page into the same structs (``normalize_v2``'s fast and slow paths share one builder).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
import orjson

from crawl_assets.normalize.build import as_list, opt_int, opt_str

# # A twarc2 page is ~3.5 KB per tweet, mostly fields no record needs (context annotations, user profiles,
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
    display_url: str | None = None


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
    errors: list[Any] | None = None  # posts X names instead of returning them (normalize_unavailable)
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
        _Url(_str(u.get("url")), _str(u.get("expanded_url")), _str(u.get("unwound_url")), u.get("media_key"),
             _str(u.get("display_url")))
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
