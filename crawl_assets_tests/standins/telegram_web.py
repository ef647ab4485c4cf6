"""A stand-in for Telegram's public channel preview (``t.me/s/<channel>``): pages of our own making in the real
page's structure, rendered from the MTProto stand-in's simulated chats (``telegram_mtproto.SimChat``), so one
channel reads the same through the ``web_channel`` kind and through the API kind.

What a page carries, as Telegram writes it: the channel header (``tgme_channel_info``: title, username,
description, counters), twenty messages oldest first (``tgme_widget_message`` with ``data-post`` and a base64url
JSON ``data-view`` whose ``c`` is the channel id negated; the text div with entities as links, ``<br>`` line
breaks and emoji images; a forwarded-from header; a reply block; photo and link-preview blocks; reactions; a
footer with views rounded as "1.2K", the post's signature, "edited" and ``<time datetime>``), service messages
(``service_message``), and the ``tme_messages_more`` links to older (``data-before``) and newer (``data-after``)
pages. A name that is not a public broadcast channel is redirected to ``/<name>``, as Telegram does.

Run alone (for bench/telegram_web.py) it serves one generated channel:
``python -m crawl_assets_tests.standins.telegram_web --messages 100000`` prints its URL.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import sys
import time
from typing import Any
from urllib.parse import quote

import emoji
import orjson
from telethon.tl import types

from crawl_assets_tests.standins.http_base import Refuse, Reply, Request, StandIn
from crawl_assets_tests.standins.telegram_mtproto.chats import ORIGIN_CHANNEL_ID, SimChat

PAGE = 20
CDN = "https://cdn.standin.invalid/file"
_HEAD = ('<!DOCTYPE html>\n<html>\n  <head>\n    <meta charset="utf-8">\n    <title>{title} – Telegram</title>\n'
         '    <meta name="viewport" content="width=device-width, initial-scale=1.0, minimum-scale=1.0">\n'
         '    <meta property="og:title" content="{title}">\n    <meta property="og:description" content="{about}">\n'
         '    <link href="//telegram.org/css/font-roboto.css?1" rel="stylesheet" type="text/css">\n'
         '    <link href="//telegram.org/css/widget-frame.css?72" rel="stylesheet" media="screen">\n'
         '    <link href="//telegram.org/css/telegram-web.css?40" rel="stylesheet" media="screen">\n'
         '    <script>window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches && '
         'document.documentElement.classList.add("theme_dark");</script>\n  </head>\n'
         '  <body class="widget_frame_base tgme_webpage emoji_image no_transitions">\n')


def views_text(n: int) -> str:
    """Views as the page shows them: exact below 1000, else one decimal and K or M."""
    if n < 1000:
        return str(n)
    value, unit = (n / 1_000_000, "M") if n >= 1_000_000 else (n / 1000, "K")
    return f"{value:.1f}".rstrip("0").rstrip(".") + unit


def data_view(chat_id: int, msg_id: int, date: Any) -> str:
    raw = orjson.dumps({"c": -chat_id, "p": msg_id, "t": int(date.timestamp()),
                        "h": hashlib.sha1(f"{chat_id}/{msg_id}".encode()).hexdigest()[:18]})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _emoji_html(text: str) -> str:
    """Escaped text with each emoji as Telegram's emoji image (the emoji itself inside ``<b>``)."""
    out, last = [], 0
    for found in emoji.emoji_list(text):
        out.append(html.escape(text[last:found["match_start"]]))
        char = found["emoji"]
        code = "".join(f"{b:02X}" for b in char.encode())
        out.append(f'<i class="emoji" style="background-image:url(\'//telegram.org/img/emoji/40/{code}.png\')">'
                   f"<b>{html.escape(char)}</b></i>")
        last = found["match_end"]
    out.append(html.escape(text[last:]))
    return "".join(out).replace("\n", "<br/>")


def text_html(text: str, entities: list[Any] | None) -> str:
    """A message's text with its entities as the page renders them (offsets in UTF-16 code units)."""
    units = text.encode("utf-16-le")

    def cut(a: int, b: int) -> str:
        return units[2 * a:2 * b].decode("utf-16-le")

    out, pos = [], 0
    for e in sorted(entities or [], key=lambda e: e.offset):
        if e.offset < pos:
            continue
        out.append(_emoji_html(cut(pos, e.offset)))
        part = cut(e.offset, e.offset + e.length)
        label = _emoji_html(part)
        if isinstance(e, types.MessageEntityHashtag):
            out.append(f'<a href="?q={quote(part)}">{label}</a>')
        elif isinstance(e, types.MessageEntityMention):
            out.append(f'<a href="https://t.me/{html.escape(part[1:])}">{label}</a>')
        elif isinstance(e, types.MessageEntityUrl):
            href = quote(part, safe=":/?&=#%~+,;@!$'()*[]")
            out.append(f'<a href="{html.escape(href)}" target="_blank" rel="noopener" '
                       f"onclick=\"return confirm('Open this link?\\n\\n'+this.href);\">{label}</a>")
        elif isinstance(e, types.MessageEntityTextUrl):
            out.append(f'<a href="{html.escape(e.url)}" target="_blank" rel="noopener">{label}</a>')
        elif isinstance(e, types.MessageEntityBold):
            out.append(f"<b>{label}</b>")
        else:
            out.append(label)
        pos = e.offset + e.length
    out.append(_emoji_html(cut(pos, len(units) // 2)))
    return "".join(out)


class TelegramWebStandIn(StandIn):
    """Serves ``/s/<channel>`` for each channel given (``origins``: usernames of forwarded-from channel ids)."""

    def __init__(self, channels: dict[str, SimChat], origins: dict[int, tuple[str, str]] | None = None):
        super().__init__()
        self.channels = {name.lower(): chat for name, chat in channels.items()}
        self.origins = {ORIGIN_CHANNEL_ID: ("origin_news", "خبرگزاری مبدأ"), **(origins or {})}

    def endpoint_of(self, req: Request) -> str:
        return "s" if req.path.startswith("/s/") else req.path

    def fault_reply(self, fault: Any) -> Reply:
        return Reply(int(fault.kind), b"<html><body>Too Many Requests</body></html>",
                     {"Content-Type": "text/html; charset=utf-8", **fault.headers})

    def route(self, req: Request) -> Reply:
        parts = req.path.strip("/").split("/")
        if len(parts) != 2 or parts[0] != "s":
            raise Refuse(404, b"<html><body>Not found</body></html>", {"Content-Type": "text/html"})
        chat = self.channels.get(parts[1].lower())
        if chat is None or chat.private or not chat.broadcast:
            raise Refuse(302, b"", {"Location": f"/{parts[1]}", "Content-Type": "text/html"})
        before, after = req.arg("before"), req.arg("after")
        if before and before.isdigit():
            ids = sorted(chat.ids_below(int(before), PAGE))
        elif after and after.isdigit():
            ids = chat.ids_from(int(after) + 1, PAGE)
        else:
            ids = sorted(chat.ids_below(None, PAGE))
        return Reply(200, self.render(chat, ids).encode(), {"Content-Type": "text/html; charset=utf-8"})

    # -- the page -------------------------------------------------------------------------------------
    def render(self, chat: SimChat, ids: list[int]) -> str:
        name = chat.username or ""
        title = html.escape(chat.title)
        out = [_HEAD.format(title=title, about=html.escape(chat.about))]
        out.append('    <main class="tgme_main"><section class="tgme_channel_history js-message_history">\n')
        if ids and chat.ids_below(ids[0], 1):
            out.append(f'<div class="tgme_widget_message_centered js-messages_more_wrap"><a href="/s/{name}?before={ids[0]}" '
                       f'class="tme_messages_more js-messages_more" data-before="{ids[0]}"></a></div>\n')
        for msg_id in ids:
            out.append(self.message(chat, chat.message(msg_id)))
        if ids and chat.ids_from(ids[-1] + 1, 1):
            out.append(f'<div class="tgme_widget_message_centered js-messages_more_wrap"><a href="/s/{name}?after={ids[-1]}" '
                       f'class="tme_messages_more js-messages_more" data-after="{ids[-1]}"></a></div>\n')
        out.append("    </section></main>\n")
        out.append(
            '    <aside class="tgme_right_column"><div class="tgme_channel_info">\n'
            f'      <div class="tgme_channel_info_header"><i class="tgme_page_photo_image bgcolor1" data-content="{title[:1]}"></i>'
            f'<div class="tgme_channel_info_header_title"><span dir="auto">{title}</span></div>'
            f'<div class="tgme_channel_info_header_username"><a href="https://t.me/{name}">@{name}</a></div></div>\n'
            f'      <div class="tgme_channel_info_description">{_emoji_html(chat.about)}</div>\n'
            '      <div class="tgme_channel_info_counters">'
            f'<div class="tgme_channel_info_counter"><span class="counter_value">{views_text(chat.participants_count)}</span> '
            '<span class="counter_type">subscribers</span></div>'
            f'<div class="tgme_channel_info_counter"><span class="counter_value">{views_text(chat.count() // 13)}</span> '
            '<span class="counter_type">photos</span></div></div>\n'
            "    </div></aside>\n  </body>\n</html>\n")
        return "".join(out)

    def message(self, chat: SimChat, m: Any) -> str:
        name, title = chat.username or "", html.escape(chat.title)
        view = data_view(chat.id, m.id, m.date)
        link = f"https://t.me/{name}/{m.id}"
        time_html = (f'<a class="tgme_widget_message_date" href="{link}"><time datetime="{m.date.isoformat()}" '
                     f'class="time">{m.date:%H:%M}</time></a>')
        if isinstance(m, types.MessageService):
            words = "Channel created" if isinstance(m.action, types.MessageActionChannelCreate) else \
                f"{title} pinned a message"
            return (f'<div class="tgme_widget_message_wrap js-widget_message_wrap"><div class="tgme_widget_message '
                    f'service_message js-widget_message" data-post="{name}/{m.id}" data-view="{view}">'
                    f'<div class="tgme_widget_message_bubble"><div class="tgme_widget_message_text js-message_text" '
                    f'dir="auto">{words}</div><div class="tgme_widget_message_footer">{time_html}</div></div></div></div>\n')
        parts = [f'<div class="tgme_widget_message_wrap js-widget_message_wrap"><div class="tgme_widget_message '
                 f'text_not_supported_wrap js-widget_message" data-post="{name}/{m.id}" data-view="{view}">'
                 f'<div class="tgme_widget_message_user"><a href="https://t.me/{name}"><i class="tgme_widget_message_user_photo '
                 f'bgcolor1" data-content="{title[:1]}"></i></a></div><div class="tgme_widget_message_bubble">'
                 f'<i class="tgme_widget_message_bubble_tail"><svg class="bubble_icon" width="9px" height="20px" '
                 f'viewBox="0 0 9 20"></svg></i><div class="tgme_widget_message_author accent_color">'
                 f'<a class="tgme_widget_message_owner_name" href="https://t.me/{name}"><span dir="auto">{title}</span></a></div>']
        fwd = m.fwd_from
        if fwd is not None:
            origin = self.origins.get(getattr(fwd.from_id, "channel_id", None))
            if origin is not None and fwd.channel_post:
                who = (f'<a class="tgme_widget_message_forwarded_from_name" href="https://t.me/{origin[0]}/{fwd.channel_post}">'
                       f'<span dir="auto">{html.escape(origin[1])}</span></a>')
            else:
                who = f'<span class="tgme_widget_message_forwarded_from_name">{html.escape(fwd.from_name or "Hidden")}</span>'
            parts.append(f'<div class="tgme_widget_message_forwarded_from accent_color">Forwarded from {who}</div>')
        if m.reply_to is not None and m.reply_to.reply_to_msg_id:
            quoted = chat.message(m.reply_to.reply_to_msg_id) if chat.exists(m.reply_to.reply_to_msg_id) else None
            snippet = html.escape((getattr(quoted, "message", "") or "")[:80])
            parts.append(f'<a class="tgme_widget_message_reply" href="https://t.me/{name}/{m.reply_to.reply_to_msg_id}">'
                         f'<div class="tgme_widget_message_author accent_color"><span class="tgme_widget_message_author_name" '
                         f'dir="auto">{title}</span></div><div class="tgme_widget_message_metatext js-message_reply_text" '
                         f'dir="auto">{snippet}</div></a>')
        if isinstance(m.media, types.MessageMediaPhoto):
            parts.append(f'<a class="tgme_widget_message_photo_wrap {m.media.photo.id} blured" href="{link}" '
                         f"style=\"width:800px;background-image:url('{CDN}/{m.media.photo.id}.jpg')\">"
                         '<div class="tgme_widget_message_photo" style="padding-top:75%"></div></a>')
        if m.message:
            parts.append(f'<div class="tgme_widget_message_text js-message_text" dir="auto">{text_html(m.message, m.entities)}</div>')
        if isinstance(m.media, types.MessageMediaWebPage) and isinstance(m.media.webpage, types.WebPage):
            page = m.media.webpage
            parts.append(f'<a class="tgme_widget_message_link_preview" href="{html.escape(page.url)}">'
                         f'<div class="link_preview_site_name accent_color" dir="auto">{html.escape(page.site_name or "")}</div>'
                         f'<div class="link_preview_title" dir="auto">{html.escape(page.title or "")}</div></a>')
        if m.reactions is not None and m.reactions.results:
            spans = "".join(f'<span class="tgme_reaction">{_emoji_html(r.reaction.emoticon)}{views_text(r.count)}</span>'
                            for r in m.reactions.results if isinstance(r.reaction, types.ReactionEmoji))
            parts.append(f'<div class="tgme_widget_message_reactions js-message_reactions">{spans}</div>')
        signature = (f'<span class="tgme_widget_message_from_author" dir="auto">{html.escape(m.post_author)}</span>,&nbsp;'
                     if m.post_author else "")
        edited = "edited&nbsp;" if m.edit_date else ""
        views = f'<span class="tgme_widget_message_views">{views_text(m.views)}</span>' if m.views is not None else ""
        parts.append(f'<div class="tgme_widget_message_footer compact js-message_footer"><div class="tgme_widget_message_info '
                     f'short js-message_info">{views}<span class="tgme_widget_message_meta">{signature}{edited}{time_html}'
                     "</span></div></div></div></div></div>\n")
        return "".join(parts)


def main(argv: list[str] | None = None) -> None:
    """Serve one generated channel (``bench``) until stdin closes; prints the URL on its first line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--name", default="benchchannel")
    args = parser.parse_args(argv)
    from datetime import datetime, timedelta, timezone

    newest = datetime(2026, 1, 1, tzinfo=timezone.utc)
    chat = SimChat(id=1_000_777_001, access_hash=1, title="کانال محک", username=args.name, about="محک 🌿",
                   top_id=args.messages, step_seconds=60, start=newest - timedelta(minutes=args.messages))
    with TelegramWebStandIn({args.name: chat}) as stand_in:
        print(stand_in.url, flush=True)
        sys.stdin.read()
        time.sleep(0.1)


if __name__ == "__main__":
    main()
