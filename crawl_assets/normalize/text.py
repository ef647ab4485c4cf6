"""Persian-aware text normalization for search (``text_clean``) and tag/handle folding.

Why a table and not hazm: hazm 0.10+ pins numpy==1.24.3 and pulls gensim, scipy, scikit-learn, nltk and
fasttext (hundreds of MB, and a numpy downgrade that breaks pandas 3); its ``Normalizer`` also rewrites
affixes and spacing heuristically, which is more than a stable search key needs. The rules below are the
ones the contract names, each a single ``str.translate`` entry or one regex, so they are fast (one pass)
and easy to test:

- Arabic yeh/alef maksura and kaf to Persian (ي ى → ی, ك → ک), Arabic presentation forms via NFKC;
- Persian (۰-۹) and Arabic-Indic (٠-٩) digits to ASCII;
- tatweel, Arabic diacritics (harakat, superscript alef, Quranic marks) and bidi controls removed;
- ZWNJ (U+200C) kept only between two letters, runs collapsed; ZWSP/BOM removed;
- whitespace runs collapsed to one space, ends stripped. Case is kept (search analyzers lowercase).

Plain text and links from the HTML bodies feedback APIs send (Discourse ``cooked``, Intercom part
bodies, Hacker News comments): the text a reader sees, with paragraph and line breaks kept, and the
media a post embeds (uploaded images, videos, audio and attachments; emoji, avatars and link-preview
thumbnails are not the post's media). A post that is only an image has empty text and one photo.

Only the author's own words are text: a quoted post (Discourse ``aside.quote``) is left out (the caller
links it), a link preview (``aside.onebox``) is the link the author wrote, an emoji image is its emoji.
Code blocks (``pre``) keep their line breaks and indentation.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin

import emoji


ZWNJ = "\u200c"

_TABLE: dict[int, str | None] = {
    0x064A: "\u06cc",  # ARABIC LETTER YEH -> FARSI YEH
    0x0649: "\u06cc",  # ARABIC LETTER ALEF MAKSURA -> FARSI YEH
    0x0643: "\u06a9",  # ARABIC LETTER KAF -> KEHEH
    0x0640: None,  # TATWEEL
    0x0670: None,  # SUPERSCRIPT ALEF
    0x200B: None,  # ZERO WIDTH SPACE
    0xFEFF: None,  # BOM / ZERO WIDTH NO-BREAK SPACE
    0x00AD: None,  # SOFT HYPHEN
    0x061C: None,  # ARABIC LETTER MARK
    0x200E: None,  # LRM
    0x200F: None,  # RLM
}
_TABLE.update({cp: None for cp in range(0x064B, 0x0660)})  # harakat, shadda, sukun, hamza marks
_TABLE.update({cp: None for cp in range(0x06D6, 0x06EE)})  # Quranic annotation marks
_TABLE.update({cp: None for cp in range(0x202A, 0x202F)})  # LRE RLE PDF LRO RLO
_TABLE.update({cp: None for cp in range(0x2066, 0x206A)})  # LRI RLI FSI PDI
_TABLE.update({0x06F0 + d: str(d) for d in range(10)})  # Persian digits
_TABLE.update({0x0660 + d: str(d) for d in range(10)})  # Arabic-Indic digits

# str.translate walks a dict per character (~14 us for 170 Persian chars); finding the few characters
# that need mapping with one regex and replacing only those is ~5x faster on typical posts.
_NEEDS_MAP = re.compile("[" + "".join(re.escape(chr(cp)) for cp in sorted(_TABLE)) + "]")
_REPLACE = {chr(cp): (value or "") for cp, value in _TABLE.items()}
# Letters ZWNJ usually sits between (ASCII and Arabic-script letters; all ``str.isalpha``): a ZWNJ with one
# of them on each side, alone, is kept by ``_fix_zwnj`` as it is. Only a text with some other ZWNJ (a run, at
# an end, or next to anything else, other letters included) needs that pass (~0.2 us to rule out, 0.9 to run).
_LETTER = "[A-Za-z" + "".join(chr(cp) for cp in range(0x0600, 0x0780) if chr(cp).isalpha()) + "]"
_ZWNJ_TO_FIX = re.compile(f"{ZWNJ}(?:(?!{_LETTER})|(?<!{_LETTER}{ZWNJ}))")


def clean_text(text: str) -> str:
    """Normalize ``text`` for search and matching (see module docstring for the rules)."""
    if not text:
        return ""
    if text.isascii():  # nothing to map, no ZWNJ or bidi controls: only whitespace to collapse
        return _collapse_whitespace(text)
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    found = _NEEDS_MAP.findall(text)
    if found:
        for char in set(found):
            text = text.replace(char, _REPLACE[char])
    if ZWNJ in text and _ZWNJ_TO_FIX.search(text):
        text = _fix_zwnj(text)
    return _collapse_whitespace(text)


def _collapse_whitespace(text: str) -> str:
    """Whitespace runs as one space, ends stripped. Most texts already are (checked in ~0.6 us, splitting and
    joining costs ~1.3): every whitespace character but the space is unprintable, and so is ZWNJ."""
    if (
        "  " not in text
        and text[:1] != " "
        and text[-1:] != " "
        and (text.replace(ZWNJ, "") if ZWNJ in text else text).isprintable()
    ):
        return text
    return " ".join(text.split())


def _fix_zwnj(text: str) -> str:
    """Keep one ZWNJ only between two letters (e.g. می‌خواهم); runs collapse, stray ones go.

    Splitting on ZWNJ is ~5x faster than a look-around regex (which cannot use a literal prefix)."""
    parts = [p for p in text.split(ZWNJ) if p]
    if not parts:
        return ""
    out = [parts[0]]
    for part in parts[1:]:
        out.append(ZWNJ + part if out[-1][-1].isalpha() and part[0].isalpha() else part)
    return "".join(out)


_FOLDED: dict[str, str] = {}
_FOLDED_MAX = 100_000


def fold_tag(tag: str) -> str:
    """A hashtag or handle as a stable key: without its sigil, cleaned like text, casefolded.

    Tags and handles repeat a lot, so results are memoized (bounded: cleared when full)."""
    folded = _FOLDED.get(tag)
    if folded is None:
        if len(_FOLDED) >= _FOLDED_MAX:
            _FOLDED.clear()
        folded = _FOLDED[tag] = _fold(tag)
    return folded


def _fold(tag: str) -> str:
    tag = tag.strip()
    if tag[:1] in ("#", "@", "＃", "＠"):
        tag = tag[1:]
    return tag.casefold() if tag.isascii() else clean_text(tag).casefold()


def unique(values: list[str]) -> list[str]:
    """Drop empty values and repeats, keeping first-seen order (deterministic output)."""
    if len(values) < 2:  # most posts have one tag, link or mention: no set
        return [values[0]] if values and values[0] else []
    return list(dict.fromkeys(v for v in values if v))


_BLOCKS = frozenset({"p", "div", "li", "blockquote", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "aside"})


@dataclass
class HtmlText:
    text: str
    urls: list[str] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)  # Discourse ``<a class="mention">@name</a>``
    media: list[dict[str, Any]] = field(default_factory=list)  # type, url, width, height (see module doc)


_SKIP_IMAGES = ("emoji", "avatar", "site-icon", "onebox-avatar")
_EMOJI_NAME = re.compile(r":([\w+\-]+):(?:t([2-6]):)?")  # Discourse's alt: ":smile:", ":+1:t3:" (a skin tone)


def emoji_of(alt: str) -> str:
    """The emoji a Discourse emoji image shows (``:smile:`` → 😄), or its alt text when it names none (a custom
    emoji of the forum)."""
    match = _EMOJI_NAME.fullmatch(alt.strip())
    if match is None:
        return alt
    found = emoji.emojize(f":{match.group(1)}:", language="alias")
    if found == f":{match.group(1)}:":
        return alt
    return found + (chr(0x1F3FB + int(match.group(2)) - 2) if match.group(2) else "")


_PREVIEW_BLOCKS = ("onebox", "quote")  # link previews and quoted posts: their images are not this post's
_HIDDEN_ASIDES = ("quote", "onebox")  # Discourse asides whose words are not the author's


class _Code(str):
    """Text inside ``pre``: kept as written (line breaks, indentation)."""


def _number(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


class _Reader(HTMLParser):
    def __init__(self, base_url: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.urls: list[str] = []
        self.mentions: list[str] = []
        self.media: list[dict[str, Any]] = []
        self._mention = False
        self._base = base_url
        self._lightbox: str | None = None  # the original image a Discourse lightbox links to
        self._attachment: dict[str, Any] | None = None
        self._muted = 0  # depth inside a lightbox's "meta" caption (file name, size: UI chrome, not text)
        self._preview = 0  # depth inside a link preview or quote
        self._hidden = 0  # depth inside a quoted post or a link preview (aside): no text of the author's
        self._onebox: str | None = None  # the link a preview shows (its data-onebox-src, else its first link)
        self._pre = 0  # depth inside pre

    def _add(self, text: str) -> None:
        self.parts.append(_Code(text) if self._pre else text)

    def _url(self, value: str | None) -> str | None:
        if not value:
            return None
        return urljoin(self._base, value) if self._base else value

    def _media(self, kind: str, url: str | None, attr: dict[str, str | None]) -> None:
        if url and not any(m["url"] == url for m in self.media):
            self.media.append({"type": kind, "url": url, "width": _number(attr.get("width")),
                               "height": _number(attr.get("height"))})

    def _embedded(self, tag: str, attr: dict[str, str | None], classes: list[str]) -> bool:
        """Media tags; True when ``tag`` was one (it adds no text)."""
        if tag == "img":
            if not any(c in classes for c in _SKIP_IMAGES) and not self._preview:
                self._media("photo", self._lightbox or self._url(attr.get("src")), attr)
            return "emoji" not in classes
        if tag == "div" and attr.get("data-video-src"):
            self._media("video", self._url(attr.get("data-video-src")), attr)
        elif tag in ("video", "audio") and attr.get("src"):
            self._media(tag, self._url(attr.get("src")), attr)
        elif tag == "source" and attr.get("src"):
            self._media("audio" if (attr.get("type") or "").startswith("audio") else "video", self._url(attr["src"]), attr)
        else:
            return False
        return True

    def _hide(self, tag: str, attr: dict[str, str | None], classes: list[str]) -> bool:
        """Asides whose words are not the author's: True while inside one (their tags add nothing)."""
        if self._hidden:
            self._hidden += tag == "aside"
            href = attr.get("href") or ""
            if tag == "a" and self._onebox == "" and href.startswith(("http://", "https://")):
                self._onebox = href
            return True
        if tag == "aside" and any(c in classes for c in _HIDDEN_ASIDES):
            self._hidden = 1
            if "onebox" in classes:
                src = attr.get("data-onebox-src") or ""
                self._onebox = src if src.startswith(("http://", "https://")) else ""
            return True
        return False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        classes = (attr.get("class") or "").split()
        if self._muted:
            self._muted += tag == "div"
            return
        if self._hide(tag, attr, classes):
            return
        if tag == "div" and "meta" in classes and self._lightbox:
            self._muted = 1
            return
        if tag in ("aside", "blockquote") and any(c in classes for c in _PREVIEW_BLOCKS) or self._preview:
            self._preview += tag in ("aside", "blockquote")
        if self._embedded(tag, attr, classes):
            return
        if tag == "a" and "lightbox" in classes:
            self._lightbox = self._url(attr.get("href"))
            return
        if tag == "a" and "attachment" in classes and attr.get("href"):
            self._attachment = {"type": "document", "url": self._url(attr["href"]), "width": None, "height": None}
            self.media.append(self._attachment)
            return
        if tag == "br":
            self._add("\n")
        elif tag in _BLOCKS and self.parts and not self.parts[-1].endswith("\n"):
            self._add("\n")
        elif tag == "a":
            self._mention = "mention" in classes
            href = attr.get("href") or ""
            if href.startswith(("http://", "https://")) and "mention" not in classes and "hashtag" not in classes:
                self.urls.append(href)
        elif tag == "img" and attr.get("alt") and "emoji" in classes:
            self._add(emoji_of(attr["alt"] or ""))
        self._pre += tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        if self._muted:
            self._muted -= tag == "div"
            return
        if self._hidden:
            self._hidden -= tag == "aside"
            if not self._hidden:
                self._end_aside()
            return
        if self._preview and tag in ("aside", "blockquote"):
            self._preview -= 1
        if tag == "pre" and self._pre:
            self._pre -= 1
        if tag in _BLOCKS:
            self._add("\n")
        elif tag == "a":
            self._mention = False
            self._lightbox = self._attachment = None

    def _end_aside(self) -> None:
        """A hidden aside ended: a link preview leaves the link the author wrote, on its own line."""
        if self._onebox:
            self.parts += ["\n", self._onebox, "\n"]
            self.urls.append(self._onebox)
        else:
            self.parts.append("\n")
        self._onebox = None

    def handle_data(self, data: str) -> None:
        if self._muted or self._hidden:
            return
        if self._attachment is not None and data.strip():
            self._attachment.setdefault("name", data.strip())
        if self._mention and data.startswith("@"):
            self.mentions.append(data[1:])
        self._add(data)


def _visible_text(parts: list[str]) -> str:
    """Lines of the parts: whitespace collapsed and empty lines dropped, except in code blocks (kept as written,
    trailing spaces and the block's blank first and last lines aside)."""
    blocks: list[str] = []
    run: list[str] = []
    code = False
    for part in [*parts, ""]:
        if isinstance(part, _Code) != code or part == "":
            text = "".join(run)
            if code:
                lines = [line.rstrip() for line in text.split("\n")]
                while lines and not lines[0].strip():
                    lines.pop(0)
                while lines and not lines[-1].strip():
                    lines.pop()
                blocks += ["\n".join(lines)] if lines else []
            else:
                blocks += [" ".join(line.split()) for line in text.split("\n") if line.split()]
            run, code = [], isinstance(part, _Code)
        run.append(part)
    return "\n".join(blocks)


def html_text(body: str, base_url: str | None = None) -> HtmlText:
    """The visible text of an HTML fragment (blocks become lines), its links, @mentions and embedded media
    (relative media URLs resolved against ``base_url``)."""
    if "<" not in body and "&" not in body:
        return HtmlText(body.strip())
    if "<" not in body:
        return HtmlText(html.unescape(body).strip())
    reader = _Reader(base_url)
    reader.feed(body)
    reader.close()
    return HtmlText(_visible_text(reader.parts), reader.urls, reader.mentions, reader.media)
