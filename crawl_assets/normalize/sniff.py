"""Which supported format a file looks like, from its first bytes (after decompression and a BOM).

Used to say "this is a Telegram Desktop export, use --format telegram-export" instead of one cryptic
rejection per line when a file is normalized with the wrong format. Only unmistakable signatures count:
when the head fits the requested format, or nothing clearly, the file is read as asked.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

import orjson

DESCRIPTIONS = {
    "x-v2": "X API v2 response pages (one JSON page per line)",
    "x-archive": "an X account archive data file (window.YTD....)",
    "telegram": "Telethon messages (one Message.to_json() per line)",
    "telegram-export": "a Telegram Desktop export (result.json)",
    "discourse": "Discourse API answers in crawl envelopes",
    "hackernews": "Hacker News search pages in crawl envelopes",
    "intercom": "Intercom conversations in crawl envelopes",
    "play": "Google Play reviews.list pages in crawl envelopes",
    "play-csv": "a Google Play Console review export (CSV)",
}
# The envelope field that names what a REST source's raw line belongs to, per format.
_ENVELOPE_FIELDS = (("host", "discourse"), ("package", "play"), ("workspace", "intercom"), ("tags", "hackernews"))
_TELETHON_TYPES = {"Message", "MessageService", "MessageEmpty"}
_EXPORT_KEYS = re.compile(rb'^\s*\{\s*"(?:about|personal_information|chats|left_chats|name|type|id|messages)"\s*:')
_EXPORT_BODY = re.compile(rb'"messages"\s*:\s*\[|"chats"\s*:\s*\{|"type"\s*:\s*"(?:personal_chat|private_group|'
                          rb'private_supergroup|public_supergroup|public_channel|private_channel|saved_messages|bot_chat)"')
_CSV_HEADER = re.compile(r"^\ufeff?\"?Package Name\"?,")


def guess_format(head: bytes) -> str | None:
    """The format ``head`` (a file's first bytes) unmistakably belongs to, or None when unsure."""
    text = head.lstrip()
    if text.startswith(b"window.YTD."):
        return "x-archive"
    utf16 = head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
    if _CSV_HEADER.match(head[:400].decode("utf-16" if utf16 else "utf-8", "replace")):
        return "play-csv"
    if not text.startswith(b"{"):
        return None
    first, newline, _ = text.partition(b"\n")
    if newline:
        line = _json(first)
        if isinstance(line, dict):
            return _line_format(line)
    if _EXPORT_KEYS.match(text) and _EXPORT_BODY.search(text):
        return "telegram-export"
    return _long_line_format(text)


_X_PAGE = re.compile(rb'^\{\s*"(?:data|includes)"\s*:\s*[\[{]')
_TELETHON = re.compile(rb'^\{\s*"_"\s*:\s*"(?:Message|MessageService|MessageEmpty)"')
_ENVELOPE = re.compile(rb'^\{\s*"crawl"\s*:\s*\{([^{}]*)\}')


def _long_line_format(text: bytes) -> str | None:
    """The format of a first line longer than the head (an API page), from how it starts."""
    if _X_PAGE.match(text):
        return "x-v2"
    if _TELETHON.match(text):
        return "telegram"
    envelope = _ENVELOPE.match(text)
    if envelope:
        crawl = _json(b"{" + envelope.group(1) + b"}")
        if isinstance(crawl, dict):
            return next((fmt for field, fmt in _ENVELOPE_FIELDS if field in crawl), None)
    return None


def _json(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def _line_format(line: dict[str, Any]) -> str | None:
    kind = line.get("_")
    if isinstance(kind, str) and kind in _TELETHON_TYPES:
        return "telegram"
    crawl = line.get("crawl")
    if isinstance(crawl, dict) and "response" in line:
        return next((fmt for field, fmt in _ENVELOPE_FIELDS if field in crawl), None)
    if "crawl" not in line and ({"data", "includes"} & line.keys() or {"errors", "meta"} <= line.keys()):
        return "x-v2"
    if isinstance(line.get("messages"), list) or "chats" in line:
        return "telegram-export"
    return None


def mismatch(fmt: str, head: bytes) -> str | None:
    """The reason to refuse reading a file as ``fmt`` when it clearly is another supported format, else None."""
    guess = guess_format(head)
    if guess is None or guess == fmt or guess not in DESCRIPTIONS:
        return None
    return (f"this looks like {DESCRIPTIONS[guess]}, not {fmt}: use --format {guess} (crawl-assets normalize) "
            f"or --option format={guess} (crawl-assets sources add)")
