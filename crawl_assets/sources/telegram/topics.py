"""Forum supergroups during a sync: the topic each message read is in, and the topics' titles.

Titles are read with the chat's metadata (``messages.getForumTopics``), learnt from topic creations and renames
as they are read, and asked for by id when a message names an unknown topic (``messages.getForumTopicsByID``).
They are kept in the source's ``topics.json`` state (``{topic: [title, as of message]}``); each raw batch gets
the titles of the topics its messages are in (manifest ``extra.normalize.topics``), for the normalizer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from telethon.tl import TLObject, functions, types

GENERAL_TOPIC = 1  # a forum's General topic: its messages carry no topic in their reply header
PAGE = 100  # topics per request (Telegram's maximum)


class TopicStore(Protocol):
    def load_topics(self) -> dict[int, list[Any]]: ...

    def save_topics(self, topics: dict[int, list[Any]]) -> None: ...


def topic_of(message: TLObject) -> int:
    """The forum topic a message of a forum is in: the ``forum_topic`` reply header's top id (a reply inside
    the topic) or replied id (the topic itself); a topic's creation message is its own topic; else General."""
    reply = getattr(message, "reply_to", None)
    if getattr(reply, "forum_topic", False):
        return int(getattr(reply, "reply_to_top_id", None) or getattr(reply, "reply_to_msg_id", None) or GENERAL_TOPIC)
    if isinstance(getattr(message, "action", None), types.MessageActionTopicCreate):
        return int(message.id)
    return GENERAL_TOPIC


def topic_title_change(message: TLObject) -> tuple[int, str] | None:
    """(topic, title) a topic's creation or a rename says; None for any other message."""
    action = getattr(message, "action", None)
    if isinstance(action, types.MessageActionTopicCreate):
        return int(message.id), action.title
    if isinstance(action, types.MessageActionTopicEdit) and action.title:
        return topic_of(message), action.title
    return None


class Titles:
    """A forum's topic titles: topic id -> [title, the message id it is true as of]. A title from an older
    message (a rename met while reading history backwards) never replaces a newer one."""

    def __init__(self, known: dict[int, list[Any]]):
        self.known = known
        self.changed = False

    def learn(self, topic: int, title: str, as_of: int) -> None:
        held = self.known.get(topic)
        if not title or (held is not None and as_of < held[1]) or held == [title, as_of]:
            return
        self.known[topic] = [title, as_of]
        self.changed = True

    def title(self, topic: int) -> str | None:
        held = self.known.get(topic)
        return held[0] if held else None

    def learn_from(self, topics: Iterable[Any]) -> None:
        """``ForumTopic`` objects (a ``ForumTopicDeleted`` has no title): true as of the topic's newest message."""
        for topic in topics:
            if isinstance(topic, types.ForumTopic):
                self.learn(topic.id, topic.title, topic.top_message or 0)


Api = Callable[[Any], Awaitable[Any]]


class ForumTopics:
    """The topics of one sync's forum: noted per message line, titled before each batch is written."""

    def __init__(self, store: TopicStore):
        self.store = store
        self._titles: Titles | None = None  # loaded from the store on first use
        self.pending: set[int] = set()  # topics of the message lines since the last batch

    @property
    def titles(self) -> Titles:
        if self._titles is None:
            self._titles = Titles(self.store.load_topics())
        return self._titles

    async def read_all(self, api: Api, peer: Any) -> None:
        """Every topic of the forum and its title now, a page at a time (newest first)."""
        offset = 0
        while True:
            page = await api(functions.messages.GetForumTopicsRequest(
                peer, offset_date=None, offset_id=0, offset_topic=offset, limit=PAGE))
            self.titles.learn_from(page.topics)
            if len(page.topics) < PAGE:
                break
            offset = min(t.id for t in page.topics)
        self.save()

    def note(self, message: TLObject) -> None:
        """A message line of the forum: its topic is pending, a creation or rename teaches a title."""
        self.pending.add(topic_of(message))
        change = topic_title_change(message)
        if change is not None:
            self.titles.learn(change[0], change[1], message.id)

    async def fetch_missing(self, api: Api, peer: Any) -> None:
        """Ask Telegram for the pending topics whose titles are unknown (a page of ids per request)."""
        if not self.pending:
            return
        missing = sorted(t for t in self.pending if self.titles.title(t) is None)
        for start in range(0, len(missing), PAGE):
            found = await api(functions.messages.GetForumTopicsByIDRequest(peer, missing[start:start + PAGE]))
            self.titles.learn_from(found.topics)
        self.save()

    def batch_titles(self, chat_id: int) -> dict[str, str]:
        """``{"<chat>:<topic>": title}`` of the pending topics with a known title; the next batch starts empty."""
        titles = {f"{chat_id}:{t}": self.titles.title(t) for t in sorted(self.pending)}
        self.pending = set()
        return {k: v for k, v in titles.items() if v is not None}

    def save(self) -> None:
        if self._titles is not None and self._titles.changed:
            self.store.save_topics(self._titles.known)
            self._titles.changed = False
