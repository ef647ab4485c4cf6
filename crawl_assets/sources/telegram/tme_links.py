"""What a ``t.me`` link names: a public chat by username (and a post of it), a private chat by id
(``t.me/c/<id>/<post>``), or an invite (``t.me/+…``, ``t.me/joinchat/…``); pages of Telegram itself
(``t.me/share``, ``t.me/addstickers/…``) name no chat. Usernames follow Telegram's rule (5 to 32 letters,
digits and underscores, starting with a letter; a few early ones have 4), matched whole."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

USERNAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,31}")
_HOSTS = frozenset({"t.me", "www.t.me", "telegram.me", "www.telegram.me", "telegram.dog", "www.telegram.dog"})
# first path segments that are Telegram's own pages, not chats
_RESERVED = frozenset({
    "addstickers", "addemoji", "addtheme", "addlist", "setlanguage", "share", "proxy", "socks", "iv", "login",
    "bg", "confirmphone", "invoice", "boost", "giftcode", "contact", "k", "z", "a", "dl", "apps", "blog", "faq",
    "privacy", "tos", "api", "jobs", "s", "c", "joinchat", "embed", "widget", "stickers", "emoji", "premium",
})


@dataclass(frozen=True)
class TmeLink:
    """``kind``: ``public`` (``name``, maybe ``post``), ``private`` (``chat_id``, maybe ``post``) or ``invite``."""

    kind: str
    name: str = ""
    chat_id: str = ""
    post: int | None = None


def is_username(value: str) -> bool:
    return USERNAME.fullmatch(value) is not None


def channel_name(identifier: str) -> str | None:
    """The username a ``web_channel`` identifier names (``name``, ``@name``, ``t.me/name``, ``t.me/s/name``,
    a link to one of its posts), or None when it names no public chat."""
    ident = identifier.strip()
    if ident.startswith("@"):
        ident = ident[1:]
    if is_username(ident):
        return ident
    link = parse(ident if "://" in ident else f"https://{ident}")
    return link.name if link is not None and link.kind == "public" else None


def parse(url: str) -> TmeLink | None:
    """What a ``t.me`` URL names, or None (another host, a page of Telegram's own, a malformed name)."""
    if len(url) > 2048:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if (parts.hostname or "") not in _HOSTS or parts.scheme not in ("http", "https", ""):
        return None
    segments = [s for s in parts.path.split("/") if s]
    if not segments:
        return None
    head = segments[0]
    if head.startswith("+") or head == "joinchat":
        return TmeLink("invite")
    if head == "c" and len(segments) >= 2 and segments[1].isdigit():
        return TmeLink("private", chat_id=str(int(segments[1])), post=_post(segments[2:]))
    if head == "s" and len(segments) >= 2:
        segments = segments[1:]
        head = segments[0]
    if head.lower() in _RESERVED or not is_username(head):
        return None
    return TmeLink("public", name=head, post=_post(segments[1:]))


def _post(rest: list[str]) -> int | None:
    return int(rest[0]) if rest and rest[0].isdigit() and len(rest[0]) <= 12 else None
