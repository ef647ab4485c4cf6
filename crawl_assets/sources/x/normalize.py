"""X normalizer ``x-v2``: API v2 response pages with ``includes``, one page per line, as twarc2 writes them
(``x-archive`` is in ``normalize_archive``; the page structs in ``normalize_structs``).

Only the page's ``data`` tweets become records; ``includes`` supply the author handle, media details and
the full text of a retweeted post's original for context (included tweets are not emitted: they are
observed only partially). A long post's text is its ``note_tweet.text``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from crawl_assets.normalize.build import (
    DELETED, GUARDED, Batch, InputError, Item, as_dict, as_id, iter_json_lines, media_doc, opt_str, parse_instant,
    parse_json,
)  # fmt: skip
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.persons import PersonIds
from crawl_assets.normalize.damage import INVALID_UTF8, has_replacement, with_flag
from crawl_assets.normalize.lang import with_script
from crawl_assets.normalize.lang import detect_lang, platform_lang
from crawl_assets.normalize.text import clean_text, fold_tag, unique
from crawl_assets.sources.x.normalize_unavailable import (
    CREATED_FROM_ID, error_page_reason, snowflake_time, unavailable_items,
)  # fmt: skip
from crawl_assets.sources.x.normalize_structs import (
    _NO_ENTITIES, _NO_MEDIA, _NO_METRICS, _coerce_tweet, _fast_page, _Includes, _Page, _Tweet, _Url, _Variant,
)  # fmt: skip


PERSONS = PersonIds(  # a post's author is its author_id (the normalizer's author_id); users are in includes
    owner_keys=("author_id",), containers=("users", "mentions", "user_mentions"),
    reference_keys=("in_reply_to_user_id", "in_reply_to_user_id_str"),
)

_X_PAGE = re.compile(rb'^\{\s*"(?:data|includes)"\s*:\s*[\[{]')


def sniff_v2(head: bytes, line: dict[str, Any] | None) -> bool:
    """An API v2 page: a line with ``data``/``includes`` (or ``errors`` and ``meta``) and no crawl envelope."""
    if line is not None:
        return "crawl" not in line and bool({"data", "includes"} & line.keys() or {"errors", "meta"} <= line.keys())
    return bool(_X_PAGE.match(head.lstrip()))


def tweet_key(tweet_id: str) -> str:
    """The record key of a post on X."""
    return f"x:{tweet_id}"


def unescape_entities(text: str) -> str:
    """X text as a reader sees it: X sends ``&``, ``<`` and ``>`` as ``&amp;``, ``&lt;`` and ``&gt;``."""
    if "&" not in text:
        return text
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


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
        collected = opt_str(as_dict(page.get("__twarc")).get("retrieved_at"))
        provenance = batch.provenance(line, _parse_iso(collected))
        errors = page.get("errors")
        if not isinstance(data, list):
            if "data" in page or not errors and not page.get("meta"):
                yield batch.reject(line, "field 'data': missing or not a list of tweets", raw)
            elif errors:
                named = list(unavailable_items(batch, line, errors, provenance, set()))
                yield from named or [batch.reject(line, error_page_reason(errors), raw, error=False)]
            continue
        includes = _Includes.parsed(as_dict(page.get("includes")))
        damaged = _damaged_tweets(data) if INVALID_UTF8 in batch.line_flags.get(line, ()) else None
        for index, tweet in enumerate(data):
            try:
                item = _v2_tweet(batch, _coerce_tweet(tweet), includes, _for_tweet(provenance, damaged, index), index)
            except GUARDED as exc:
                item = batch.failure(line, tweet, exc)
            yield item
        if errors:
            found = {t["id"] for t in data if isinstance(t, dict) and isinstance(t.get("id"), str)}
            yield from unavailable_items(batch, line, errors, provenance, found)


def _damaged_tweets(data: list[Any]) -> set[int] | None:
    """Indexes of a repaired page's tweets that hold U+FFFD; None (all of them) when the damage is elsewhere
    (in ``includes``, which every tweet of the page may draw on)."""
    damaged = {i for i, tweet in enumerate(data) if has_replacement(tweet)}
    return damaged or None


def _for_tweet(provenance: dict[str, Any], damaged: set[int] | None, index: int) -> dict[str, Any]:
    """The page provenance, without the invalid-UTF-8 flag for a tweet the repaired bytes were not in."""
    if damaged is None or index in damaged:
        return provenance
    return {**provenance, "flags": [f for f in provenance["flags"] if f != INVALID_UTF8]}


def _deletion(batch: Batch, line: int, mark: dict[str, Any]) -> Item:
    """A post the collector's refresh no longer found by id: a bare tombstone (``created_at`` from the
    id's own timestamp), which ``normalized_records`` merges onto the post's last full observation."""
    post_id = as_id(mark.get("id"), "id")
    observed = parse_instant(mark.get("observed_at"), "observed_at")
    # snowflake ids (since late 2010) carry their creation time; older or odd ids fall back to the observation
    try:
        created = snowflake_time(post_id, "id")
    except InputError:
        created = observed
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
            items.append(_v2_tweet(batch, tweet, includes, provenance, index, decoded=True))
        if page.errors:
            found = {t.id for t in page.data or () if type(t.id) is str}
            items.extend(unavailable_items(batch, line, page.errors, provenance, found))
    except GUARDED:
        return None
    return items



_METADATA_FIELDS = ("source", "possibly_sensitive", "reply_settings", "in_reply_to_user_id", "edit_history_tweet_ids",
                    "withheld", "geo")  # copied into metadata when present, in this order


def _v2_tweet(batch: Batch, tweet: Any, includes: _Includes, provenance: dict[str, Any], index: int,
              decoded: bool = False) -> Item:  # fmt: skip
    """One ``data`` tweet (a ``_Tweet``; anything else was not an object). The hot path of ``crawl-assets
    normalize``: it builds the record document directly in ``Record`` field order (no intermediate dict).
    ``decoded``: the tweet came from the typed decoder, whose integers are held to 64 bits (only its raw
    JSON fields may hold larger ones)."""
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
    # the tweet's fields without a common one, present ones in this order
    metadata: dict[str, Any] = {name: value for name in _METADATA_FIELDS
                                if (value := getattr(tweet, name)) is not None}
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
    if tweet.created_at is None:  # default fields (id, text, edit_history_tweet_ids): the id tells the time
        created_at = snowflake_time(tweet_id, f"data[{index}].created_at")
        provenance = with_flag(provenance, CREATED_FROM_ID)
    else:
        try:
            created_at = parse_instant(tweet.created_at, "created_at")
        except InputError:  # again, for the message naming the tweet (not formatted for every tweet)
            created_at = parse_instant(tweet.created_at, f"data[{index}].created_at")
    search_text = unescape_entities(text) if batch.context.text_fields else ""  # "": a counting pass (export_file/stats.py)
    if lang is None:
        lang = detect_lang(search_text, batch.context.languages)
    lang, metadata = with_script(lang, search_text, metadata)  # Finglish: Persian in Latin letters
    raw_fields = tweet.withheld is not None or tweet.geo is not None or "poll_ids" in metadata
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
            "text_clean": clean_text(search_text),
            "lang": lang,
            "reply_to": reply_to,
            "quote_of": quote_of,
            "repost_of": repost_of,
            "conversation_id": "x:" + conversation if type(conversation) is str and conversation.isdigit() else None,
            "hashtags": unique([fold_tag(h.tag) for h in hashtags if h.tag is not None]) if hashtags else [],
            "mentions": unique([fold_tag(m.username) for m in mentions if m.username is not None]) if mentions else [],
            "urls": unique([u.unwound_url or u.expanded_url or u.url or "" for u in urls if not _is_media(u)])
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
        },
        bounded=decoded and not raw_fields,
    )


# A post's own photo or video as a link: X's permalink to it, shown as pic.twitter.com/… (pic.x.com/…)
MEDIA_PERMALINK = re.compile(r"https?://(?:(?:www|mobile)\.)?(?:twitter|x)\.com/[^/?#]+/status/\d+/(?:photo|video)/\d+/?")
_MEDIA_DISPLAY = ("pic.twitter.com/", "pic.x.com/")


def _is_media(url: _Url) -> bool:
    """Whether a url entity is the post's media (named by its ``media_key``, or, on pages that leave the key out,
    by its permalink), not a link the author shared."""
    if url.media_key or (url.display_url or "").startswith(_MEDIA_DISPLAY):
        return True
    return bool(url.expanded_url and MEDIA_PERMALINK.fullmatch(url.expanded_url))


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

