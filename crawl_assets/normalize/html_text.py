"""Plain text and links from the HTML bodies feedback APIs send (Discourse ``cooked``, Intercom part
bodies, Hacker News comments): the text a reader sees, with paragraph and line breaks kept, and the
media a post embeds (uploaded images, videos, audio and attachments; emoji, avatars and link-preview
thumbnails are not the post's media). A post that is only an image has empty text and one photo.

Only the author's own words are text: a quoted post (Discourse ``aside.quote``) is left out (the caller
links it), a link preview (``aside.onebox``) is the link the author wrote, an emoji image is its emoji.
Code blocks (``pre``) keep their line breaks and indentation."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin

import emoji

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
