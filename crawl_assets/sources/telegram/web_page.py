"""A public channel's web preview page (``t.me/s/<channel>``) read into plain values: the channel's header, its
messages (``tgme_widget_message``) and the links to older and newer pages. Pure: the collector reads ids and
links from it, the ``telegram-web`` normalizer the rest.

A message's place on the page, as Telegram renders it: ``data-post="<channel>/<id>"``; ``data-view`` (base64url
JSON whose ``c`` is the channel's id, negated: how the key gets the same chat id as the API's); the text div
(entities as tags, ``<br>`` for line breaks, emoji as ``<i class="emoji"><b>😀</b></i>``); a footer with views
("1.2K"), the post's signature, "edited" and ``<time datetime>``; a forwarded-from header; a reply block
linking the replied post; photo, video, voice, document, sticker, poll, location and link-preview blocks;
reactions. Parsed with selectolax (Lexbor): an HTML5 parser, so broken markup reads as a browser reads it.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any

import orjson
from selectolax.lexbor import LexborHTMLParser, LexborNode

from crawl_assets.sources.telegram import tme_links

_POST = re.compile(r"([A-Za-z][A-Za-z0-9_]{3,31})/(\d{1,12})")
_BG_URL = re.compile(r"background-image:\s*url\(['\"]?([^'\")]+)['\"]?\)")
_COUNT = re.compile(r"([0-9]+(?:[.,][0-9]+)?)\s*([KMB]?)", re.IGNORECASE)
_DURATION = re.compile(r"(?:(\d+):)?(\d{1,2}):(\d{2})")
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(B|KB|MB|GB)", re.IGNORECASE)
_UNITS = {"": 1, "k": 1_000, "m": 1_000_000, "b": 1_000_000_000}
_BYTES = {"b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30}


@dataclass
class WebMessage:
    """One message as the page shows it (``media`` entries are ``Media`` fields; ``None``: not shown)."""

    channel: str
    id: int
    chat_id: str | None
    service: bool = False
    date: str | None = None
    text: str = ""
    hashtags: list[str] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    views: int | None = None
    views_rounded: bool = False
    edited: bool = False
    signature: str | None = None
    forwarded: dict[str, Any] | None = None
    reply: tme_links.TmeLink | None = None
    media: list[dict[str, Any]] = field(default_factory=list)
    reactions: dict[str, int] | None = None


@dataclass
class WebPage:
    channel: dict[str, Any]
    messages: list[WebMessage]
    before: int | None  # the link to older messages (``?before=N``), when the page has one
    after: int | None  # the link to newer messages (``?after=N``)

    @property
    def is_preview(self) -> bool:
        """A channel's preview page (a header or messages); else Telegram sent something else."""
        return bool(self.channel) or bool(self.messages)


def parse_page(html: str) -> WebPage:
    tree = LexborHTMLParser(html)
    messages = [m for node in tree.css("div.tgme_widget_message[data-post]") if (m := _message(node)) is not None]
    before = after = None
    for link in tree.css("a.tme_messages_more"):
        before = _int(link.attributes.get("data-before")) or before
        after = _int(link.attributes.get("data-after")) or after
    return WebPage(_channel(tree), messages, before, after)


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and len(value) <= 12 else None


def _text_of(node: LexborNode | None) -> str:
    return node.text(deep=True).strip() if node is not None else ""


def _channel(tree: LexborHTMLParser) -> dict[str, Any]:
    info = tree.css_first("div.tgme_channel_info")
    if info is None:
        return {}
    counters = {}
    for counter in info.css("div.tgme_channel_info_counter"):
        kind = _text_of(counter.css_first(".counter_type"))
        value, _ = count(_text_of(counter.css_first(".counter_value")))
        if kind and value is not None:
            counters[kind] = value
    username = _text_of(info.css_first(".tgme_channel_info_header_username")).lstrip("@")
    return {"title": _text_of(info.css_first(".tgme_channel_info_header_title")) or None,
            "username": username or None,
            "description": _text_of(info.css_first(".tgme_channel_info_description")) or None,
            "counters": counters}


def count(text: str) -> tuple[int | None, bool]:
    """A number as the page writes it ("1.2K", "15", "3M") and whether it is rounded."""
    match = _COUNT.fullmatch(text.strip().replace(" ", ""))
    if match is None:
        return None, False
    number, unit = match.group(1).replace(",", "."), match.group(2).lower()
    return round(float(number) * _UNITS[unit]), bool(unit)


def chat_id_of(view: str | None) -> str | None:
    """The bare channel id in a ``data-view`` value (base64url JSON, ``c`` = the id negated), or None."""
    if not view or len(view) > 512:
        return None
    try:
        data = orjson.loads(base64.urlsafe_b64decode(view + "=" * (-len(view) % 4)))
    except (ValueError, orjson.JSONDecodeError):
        return None
    chat = data.get("c") if isinstance(data, dict) else None
    if not isinstance(chat, int) or isinstance(chat, bool) or chat == 0:
        return None
    digits = str(abs(chat))
    return digits[3:] if chat < 0 and digits.startswith("100") and len(digits) > 12 else digits


def _message(node: LexborNode) -> WebMessage | None:
    post = _POST.fullmatch(node.attributes.get("data-post") or "")
    if post is None:
        return None
    classes = (node.attributes.get("class") or "").split()
    msg = WebMessage(channel=post.group(1), id=int(post.group(2)), chat_id=chat_id_of(node.attributes.get("data-view")),
                     service="service_message" in classes)
    time = node.css_first(".tgme_widget_message_date time[datetime]") or node.css_first("time[datetime]")
    msg.date = time.attributes.get("datetime") if time is not None else None
    body = node.css_first(".tgme_widget_message_text")
    if body is not None:
        _read_text(body, msg)
    meta = node.css_first(".tgme_widget_message_meta")
    msg.edited = meta is not None and "edited" in meta.text(deep=True).split()
    msg.signature = _text_of(node.css_first(".tgme_widget_message_from_author")) or None
    views = node.css_first(".tgme_widget_message_views")
    if views is not None:
        msg.views, msg.views_rounded = count(_text_of(views))
    msg.forwarded = _forwarded(node)
    reply = node.css_first("a.tgme_widget_message_reply")
    if reply is not None:
        msg.reply = tme_links.parse(reply.attributes.get("href") or "")
    msg.media, preview = _media(node)
    if preview and preview not in msg.urls:
        msg.urls.append(preview)
    msg.reactions = _reactions(node)
    return msg


def _read_text(body: LexborNode, msg: WebMessage) -> None:
    """The text as written (``<br>`` → newline, emoji images → their emoji) and the hashtags, mentions and URLs
    its links mark, in order."""
    parts: list[str] = []
    for item in body.traverse(include_text=True):
        if item is body:
            continue
        if item.tag == "-text":
            parts.append(item.text_content or "")
        elif item.tag == "br":
            parts.append("\n")
        elif item.tag == "a":
            _link(item, msg)
    msg.text = "".join(parts)


def _link(anchor: LexborNode, msg: WebMessage) -> None:
    href = anchor.attributes.get("href") or ""
    label = anchor.text(deep=True)
    if label.startswith("#") and href.startswith("?q="):
        _add(msg.hashtags, label)
    elif label.startswith("@") and (link := tme_links.parse(href)) is not None and link.kind == "public":
        _add(msg.mentions, label)
    elif href.startswith(("http://", "https://")):
        # an auto-link shows what the author typed (the API's url entity); a text link only its target
        _add(msg.urls, label if _same_link(label, href) else href)


def _same_link(label: str, href: str) -> bool:
    from urllib.parse import unquote

    def bare(url: str) -> str:
        return unquote(url).removeprefix("https://").removeprefix("http://").rstrip("/")

    return bool(label) and bare(label) == bare(href)


def _add(values: list[str], value: str) -> None:
    if value and value not in values:
        values.append(value)


def _forwarded(node: LexborNode) -> dict[str, Any] | None:
    header = node.css_first(".tgme_widget_message_forwarded_from")
    if header is None:
        return None
    name = header.css_first(".tgme_widget_message_forwarded_from_name")
    found: dict[str, Any] = {"from_name": _text_of(name) or None}
    link = tme_links.parse(name.attributes.get("href") or "") if name is not None else None
    if link is not None and link.kind == "public":
        found.update(from_username=link.name, channel_post=link.post)
    author = _text_of(header.css_first(".tgme_widget_message_forwarded_from_author"))
    if author:
        found["post_author"] = author
    return {k: v for k, v in found.items() if v is not None}


def _background(node: LexborNode | None) -> str | None:
    if node is None:
        return None
    match = _BG_URL.search(node.attributes.get("style") or "")
    return match.group(1) if match else None


def _seconds(text: str) -> float | None:
    match = _DURATION.search(text)
    if match is None:
        return None
    hours, minutes, secs = int(match.group(1) or 0), int(match.group(2)), int(match.group(3))
    return float(hours * 3600 + minutes * 60 + secs)


def _doc_size(text: str) -> int | None:
    match = _SIZE.search(text)
    return round(float(match.group(1)) * _BYTES[match.group(2).lower()]) if match else None


def _media(node: LexborNode) -> tuple[list[dict[str, Any]], str | None]:
    """The attachments the page shows (type, url where given, duration, a document's size as written), and the
    link preview's URL."""
    out: list[dict[str, Any]] = []
    for photo in node.css("a.tgme_widget_message_photo_wrap"):
        out.append({"type": "photo", "url": _background(photo)})
    for player in node.css(".tgme_widget_message_video_player, .tgme_widget_message_roundvideo_player"):
        round_video = "roundvideo" in (player.attributes.get("class") or "")
        video = player.css_first("video")
        out.append({"type": "video_note" if round_video else "video",
                    "url": video.attributes.get("src") if video is not None else None,
                    "duration": _seconds(_text_of(player.css_first(".message_video_duration, time")))})
    for voice in node.css(".tgme_widget_message_voice_player"):
        audio = voice.css_first("audio")
        out.append({"type": "voice", "url": audio.attributes.get("src") if audio is not None else None,
                    "duration": _seconds(_text_of(voice.css_first(".tgme_widget_message_voice_duration")))})
    for doc in node.css(".tgme_widget_message_document"):
        out.append({"type": "document", "size": _doc_size(_text_of(doc.css_first(".tgme_widget_message_document_extra")))})
    for sticker in node.css(".tgme_widget_message_sticker"):
        out.append({"type": "sticker", "url": sticker.attributes.get("data-webp") or _background(sticker)})
    if node.css_first(".tgme_widget_message_poll") is not None:
        out.append({"type": "poll"})
    if node.css_first(".tgme_widget_message_location") is not None:
        out.append({"type": "geo"})
    preview = node.css_first("a.tgme_widget_message_link_preview")
    url = preview.attributes.get("href") if preview is not None else None
    if url:
        out.append({"type": "webpage", "url": url})
    return out, url


def _reactions(node: LexborNode) -> dict[str, int] | None:
    counts: dict[str, int] = {}
    for reaction in node.css(".tgme_widget_message_reactions .tgme_reaction"):
        emoji = reaction.css_first("b")
        custom = reaction.css_first("tg-emoji")
        label = _text_of(emoji) if emoji is not None else (
            f"custom:{custom.attributes.get('emoji-id')}" if custom is not None else "")
        shown = "".join(t.text_content or "" for t in reaction.iter(include_text=True) if t.tag == "-text")
        value, _ = count(shown)
        if label and value is not None:
            counts[label] = counts.get(label, 0) + value
    return counts or None
