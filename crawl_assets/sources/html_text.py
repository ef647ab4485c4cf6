"""Plain text and links from the HTML bodies feedback APIs send (Discourse ``cooked``, Intercom part
bodies, Hacker News comments): the text a reader sees, with paragraph and line breaks kept."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from html.parser import HTMLParser

_BLOCKS = frozenset({"p", "div", "li", "blockquote", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "aside"})


@dataclass
class HtmlText:
    text: str
    urls: list[str] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)  # Discourse ``<a class="mention">@name</a>``


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.urls: list[str] = []
        self.mentions: list[str] = []
        self._mention = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "br":
            self.parts.append("\n")
        elif tag in _BLOCKS and self.parts and not self.parts[-1].endswith("\n"):
            self.parts.append("\n")
        elif tag == "a":
            classes = (attr.get("class") or "").split()
            self._mention = "mention" in classes
            href = attr.get("href") or ""
            if href.startswith(("http://", "https://")) and "mention" not in classes and "hashtag" not in classes:
                self.urls.append(href)
        elif tag == "img" and attr.get("alt") and "emoji" in (attr.get("class") or ""):
            self.parts.append(attr["alt"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCKS:
            self.parts.append("\n")
        elif tag == "a":
            self._mention = False

    def handle_data(self, data: str) -> None:
        if self._mention and data.startswith("@"):
            self.mentions.append(data[1:])
        self.parts.append(data)


def html_text(body: str) -> HtmlText:
    """The visible text of an HTML fragment (blocks become lines), its links and @mentions."""
    if "<" not in body and "&" not in body:
        return HtmlText(body.strip())
    if "<" not in body:
        return HtmlText(html.unescape(body).strip())
    reader = _Reader()
    reader.feed(body)
    reader.close()
    lines = [" ".join(line.split()) for line in "".join(reader.parts).split("\n")]
    text = "\n".join(line for line in lines if line)
    return HtmlText(text, reader.urls, reader.mentions)
