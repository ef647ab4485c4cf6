"""Forum topics in Telegram Desktop exports (``normalize_export.py`` reads the rest of a message).

An export names no message's topic: Telegram Desktop writes only ``reply_to_message_id``. A topic's creation
(``"action": "topic_created"``) has the topic's id as its own id, so a message replying to it is a top-level
message of that topic, a message replying to another message is in that message's topic, and one replying to
nothing is in General. Messages come in id order, so one pass keeps, per message of a forum, its topic: two
packed arrays (16 bytes a message), searched by bisection.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import Any

from crawl_assets.sources.telegram.normalize_topics import GENERAL_TOPIC

TOPIC_CREATED = "topic_created"
# The title Telegram gives the General topic; an export never names it (nor a rename of it).
GENERAL_TITLE = "General"
_ID_LIMIT = 2**63


class ExportForum:
    """The topics of the chat being read: known once a topic's creation is read (an export says nothing else
    of a chat being a forum), so messages before the first creation stay without topic."""

    def __init__(self) -> None:
        self._chat: dict[str, Any] | None = None
        self._reset()

    def _reset(self) -> None:
        self.titles: dict[int, str | None] = {}
        self._ids = array("q")
        self._topics = array("q")

    def enter(self, chat: dict[str, Any]) -> None:
        """Start over when a full export moves on to its next chat."""
        if chat is not self._chat:
            self._chat = chat
            self._reset()

    def created(self, topic: int, title: str | None) -> None:
        self.titles[topic] = title

    def title(self, topic: int) -> str | None:
        return self.titles.get(topic) or (GENERAL_TITLE if topic == GENERAL_TOPIC else None)

    def place(self, message_id: int, reply_id: int | None, same_chat: bool) -> tuple[int | None, bool]:
        """(topic, whether the message is a top-level one of its topic) of a message, remembered for the
        replies to it; (None, False) outside forums or when the replied message is not in the export."""
        if not self.titles:
            return None, False
        top_level = False
        if reply_id is None:
            topic: int | None = GENERAL_TOPIC
        elif not same_chat:
            topic = None
        elif reply_id in self.titles:
            topic, top_level = reply_id, True
        else:
            topic = self._topic_of(reply_id)
        if topic is not None and max(topic, message_id) < _ID_LIMIT and (not self._ids or message_id > self._ids[-1]):
            # a message out of id order (or beyond 64 bits) is not kept: a reply to it gets no topic
            self._ids.append(message_id)
            self._topics.append(topic)
        return topic, top_level

    def _topic_of(self, message_id: int) -> int | None:
        at = bisect_left(self._ids, message_id)
        return self._topics[at] if at < len(self._ids) and self._ids[at] == message_id else None
