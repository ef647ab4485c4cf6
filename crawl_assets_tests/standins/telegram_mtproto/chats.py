"""The simulated chats: channels and supergroups generated lazily from message ids, their text with
entities (UTF-16 offsets) and the TL objects Telegram answers with."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from telethon.tl import TLObject, types

BASE = datetime(2020, 1, 1, tzinfo=timezone.utc)
ORIGIN_CHANNEL_ID = 1_500_000_001  # the channel forwarded posts come from


# -- text with entities (offsets in UTF-16 code units) -------------------------------------------

_TOKEN = re.compile(r"(#\w+)|(@\w+)|(https?://\S+)")


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def entities_for(text: str) -> list[TLObject]:
    """Hashtag, mention and URL entities the way Telegram reports them: UTF-16 offsets and lengths."""
    out: list[TLObject] = []
    for match in _TOKEN.finditer(text):
        offset, length = utf16_len(text[: match.start()]), utf16_len(match.group(0))
        if match.group(1):
            out.append(types.MessageEntityHashtag(offset, length))
        elif match.group(2):
            out.append(types.MessageEntityMention(offset, length))
        else:
            out.append(types.MessageEntityUrl(offset, length))
    return out


TEMPLATES: list[str] = [
    "سلام دنیا #خبر_فوری از @news_fa https://example.com/fa/خبر",
    "Breaking 🚀 #Tech update by @writer see https://example.org/x?q=1",
    "👍🏽 گزارش ویژه #ایران 🇮🇷 https://t.me/s/example @Reporter_1",
    "Plain text message",
    "متن ساده فارسی با نیم‌فاصله و ۱۲۳ رقم",
    "Mixed English و فارسی 😀😀 #MixedTag #تگ @someone",
]
_TEMPLATE_ENTITIES = [entities_for(t) for t in TEMPLATES]


# -- the simulated chats ---------------------------------------------------------------------------


@dataclass
class SimChat:
    """A channel (``broadcast``) or supergroup; generated ids 1..top_id unless ``generated`` is False."""

    id: int
    access_hash: int
    title: str
    username: str | None = None
    about: str = ""
    broadcast: bool = True
    top_id: int = 0
    step_seconds: int = 600
    start: datetime = BASE
    generated: bool = True
    private: bool = False
    participants_count: int = 1234
    linked: "SimChat | None" = None
    deleted: set[int] = field(default_factory=set)
    edits: dict[int, int] = field(default_factory=dict)
    bumps: dict[int, int] = field(default_factory=dict)
    explicit: dict[int, TLObject] = field(default_factory=dict)
    # channel post id -> (discussion root id in the linked group, [comment ids])
    threads: dict[int, tuple[int, list[int]]] = field(default_factory=dict)
    media_bytes: int = 2048
    media_dc: int = 2  # the data centre its photos live on (4: Telethon downloads them on a second connection)
    # a forum supergroup: topic id (the id of the service message that created it) -> its title now; the
    # General topic (1) is always there. ``topic_created`` keeps each topic's first title.
    forum: bool = False
    topics: dict[int, str] = field(default_factory=dict)
    topic_created: dict[int, str] = field(default_factory=dict)
    topic_edits: dict[int, tuple[int, str]] = field(default_factory=dict)  # edit message id -> (topic, new title)

    # ids ------------------------------------------------------------------------------------
    def exists(self, msg_id: int) -> bool:
        if self.generated:
            return 1 <= msg_id <= self.top_id and msg_id not in self.deleted
        return msg_id in self.explicit and msg_id not in self.deleted

    def ids_below(self, below: int | None, n: int, lo: int = 0) -> list[int]:
        """Up to ``n`` largest existing ids < ``below`` (None: no bound) and > ``lo``, descending."""
        out: list[int] = []
        if not self.generated:
            for i in sorted(self.explicit, reverse=True):
                if len(out) >= n:
                    break
                if (below is None or i < below) and i > lo and i not in self.deleted:
                    out.append(i)
            return out
        i = self.top_id if below is None else min(below - 1, self.top_id)
        while i > lo and len(out) < n:
            if i not in self.deleted:
                out.append(i)
            i -= 1
        return out

    def ids_from(self, start: int, n: int) -> list[int]:
        """Up to ``n`` smallest existing ids >= ``start``, ascending."""
        if not self.generated:
            return [i for i in sorted(self.explicit) if i >= start and i not in self.deleted][:n]
        out, i = [], max(start, 1)
        while i <= self.top_id and len(out) < n:
            if i not in self.deleted:
                out.append(i)
            i += 1
        return out

    def count(self) -> int:
        if self.generated:
            return self.top_id - sum(1 for d in self.deleted if d <= self.top_id)
        return len([i for i in self.explicit if i not in self.deleted])

    # changes --------------------------------------------------------------------------------
    def post(self, n: int = 1) -> list[int]:
        """New messages at the top (dates continue the sequence)."""
        first = self.top_id + 1
        self.top_id += n
        return list(range(first, self.top_id + 1))

    def edit(self, msg_id: int) -> None:
        self.edits[msg_id] = self.edits.get(msg_id, 0) + 1

    def delete(self, *msg_ids: int) -> None:
        self.deleted.update(msg_ids)

    def bump(self, msg_id: int) -> None:
        """Counters (views, forwards, reactions) go up, as they do on a live post."""
        self.bumps[msg_id] = self.bumps.get(msg_id, 0) + 1

    def add_topic(self, topic_id: int, title: str) -> None:
        """Topic ``topic_id`` is created by the (service) message of that id."""
        self.forum = True
        self.topics.setdefault(1, "General")
        self.topics[topic_id] = self.topic_created[topic_id] = title

    def edit_topic(self, topic_id: int, title: str) -> int:
        """A new message at the top renames the topic (``MessageActionTopicEdit``); its id."""
        (edit_id,) = self.post(1)
        self.topic_edits[edit_id] = (topic_id, title)
        self.topics[topic_id] = title
        return edit_id

    def topic_of(self, msg_id: int) -> int:
        """The topic a generated message of a forum is in: one of the topics created before it (General: 1)."""
        open_topics = [1] + sorted(t for t in self.topic_created if t < msg_id)
        return open_topics[msg_id % len(open_topics)]

    def _forum_header(self, msg_id: int) -> TLObject | None:
        """How a forum message says its topic: ``forum_topic`` with the topic (or, for a reply, the replied
        message and the topic as ``reply_to_top_id``); messages of General carry none."""
        topic = self.topic_of(msg_id)
        if topic == 1:
            return None
        if msg_id % 7 == 0:
            earlier = next((i for i in range(msg_id - 1, topic, -1) if i not in self.topic_created
                            and i not in self.topic_edits and self.topic_of(i) == topic), None)
            if earlier is not None:
                return types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=earlier, reply_to_top_id=topic)
        return types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=topic)

    def forum_topic(self, topic_id: int) -> TLObject:
        return types.ForumTopic(
            id=topic_id, date=self.date_of(topic_id), peer=types.PeerChannel(self.id), title=self.topics[topic_id],
            icon_color=0x6FB9F0, top_message=self.top_id, read_inbox_max_id=0, read_outbox_max_id=0, unread_count=0,
            unread_mentions_count=0, unread_reactions_count=0, unread_poll_votes_count=0,
            from_id=types.PeerUser(COMMENTER.id), notify_settings=types.PeerNotifySettings())

    def date_of(self, msg_id: int) -> datetime:
        return self.start + timedelta(seconds=msg_id * self.step_seconds)

    # TL objects -------------------------------------------------------------------------------
    def tl(self) -> types.Channel:
        return types.Channel(
            id=self.id, title=self.title, photo=types.ChatPhotoEmpty(), date=self.start,
            broadcast=self.broadcast or None, megagroup=(not self.broadcast) or None,
            access_hash=self.access_hash, username=self.username,
            participants_count=self.participants_count, has_link=bool(self.linked) or None, forum=self.forum or None,
        )

    def message(self, msg_id: int) -> TLObject:
        if msg_id in self.explicit:
            return self.explicit[msg_id]
        peer = types.PeerChannel(self.id)
        date = self.date_of(msg_id)
        if msg_id == 1:
            return types.MessageService(id=1, peer_id=peer, date=date, post=True,
                                        action=types.MessageActionChannelCreate(title=self.title))
        if msg_id in self.topic_created:
            return types.MessageService(id=msg_id, peer_id=peer, date=date, from_id=types.PeerUser(COMMENTER.id),
                                        action=types.MessageActionTopicCreate(title=self.topic_created[msg_id],
                                                                              icon_color=0x6FB9F0))
        if msg_id in self.topic_edits:
            topic, title = self.topic_edits[msg_id]
            return types.MessageService(id=msg_id, peer_id=peer, date=date, from_id=types.PeerUser(COMMENTER.id),
                                        reply_to=types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=topic),
                                        action=types.MessageActionTopicEdit(title=title))
        if msg_id % 97 == 0:
            return types.MessageService(id=msg_id, peer_id=peer, date=date, post=True,
                                        reply_to=types.MessageReplyHeader(reply_to_msg_id=msg_id - 1),
                                        action=types.MessageActionPinMessage())
        t = msg_id % len(TEMPLATES)
        text = f"{TEMPLATES[t]} ·{msg_id}"
        version = self.edits.get(msg_id, 0)
        entities = list(_TEMPLATE_ENTITIES[t])
        edit_date = None
        if version:
            text += f" (ویرایش {version})"
            edit_date = date + timedelta(minutes=5 * version)
        bump = self.bumps.get(msg_id, 0)
        fwd = reply = media = replies = None
        if msg_id % 10 == 0:
            fwd = types.MessageFwdHeader(date=date - timedelta(days=1), from_id=types.PeerChannel(ORIGIN_CHANNEL_ID),
                                         channel_post=msg_id // 10)
        elif msg_id % 7 == 0:
            reply = types.MessageReplyHeader(reply_to_msg_id=msg_id - 3)
        if msg_id % 13 == 0:
            media = types.MessageMediaPhoto(photo=types.Photo(
                id=10_000_000 + msg_id, access_hash=msg_id * 7919, file_reference=b"\x01\x02" + msg_id.to_bytes(4, "big"),
                date=date, sizes=[types.PhotoSize("m", 320, 240, 9000), types.PhotoSize("y", 1280, 960, self.media_bytes)],
                dc_id=self.media_dc))
        if msg_id in self.threads and self.linked is not None:
            _, comments = self.threads[msg_id]
            live = [c for c in comments if self.linked.exists(c)]
            replies = types.MessageReplies(replies=len(live), replies_pts=len(comments), comments=True,
                                           channel_id=self.linked.id, max_id=max(live) if live else None)
        reactions = types.MessageReactions(results=[
            types.ReactionCount(reaction=types.ReactionEmoji("👍"), count=5 + msg_id % 9 + bump),
            types.ReactionCount(reaction=types.ReactionEmoji("❤"), count=2),
        ])
        if self.forum and fwd is None:  # in a forum every message is in a topic; its header says which
            reply = self._forum_header(msg_id)
        if not self.broadcast:  # a supergroup: members write, no channel-post counters
            return types.Message(
                id=msg_id, peer_id=peer, date=date, message=text, from_id=types.PeerUser(COMMENTER.id),
                fwd_from=fwd, reply_to=reply, media=media, entities=entities, edit_date=edit_date, reactions=reactions)
        return types.Message(
            id=msg_id, peer_id=peer, date=date, message=text, post=True, fwd_from=fwd, reply_to=reply,
            media=media, entities=entities, views=1000 + msg_id % 500 + 10 * bump, forwards=msg_id % 17 + bump,
            replies=replies, edit_date=edit_date, reactions=reactions,
            post_author="Editor" if msg_id % 5 == 0 else None,
        )

COMMENTER = types.User(id=777_000_001, access_hash=42, first_name="کاربر", username="commenter")


def iter_existing(chat: SimChat) -> Iterator[int]:
    """Every existing message id, ascending (for assertions)."""
    return iter(chat.ids_from(1, 10**9)) if chat.generated else iter(sorted(i for i in chat.explicit if chat.exists(i)))
