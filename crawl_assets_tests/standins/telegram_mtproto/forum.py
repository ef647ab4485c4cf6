"""Forum supergroups' topics: the simulated server's handlers (``World`` has them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from telethon.tl import TLObject, types

from crawl_assets_tests.standins.telegram_mtproto.accounts import Account
from crawl_assets_tests.standins.telegram_mtproto.chats import SimChat
from crawl_assets_tests.standins.telegram_mtproto.errors import ServerError


class ForumHandlers:
    """``messages.getForumTopics`` and ``messages.getForumTopicsByID`` (needs the ``World``'s ``_chat``)."""

    _chat: Callable[[Any], SimChat]  # the World's: the chat a peer names, or the error Telegram gives

    def _forum(self, peer: Any) -> SimChat:
        chat = self._chat(peer)
        if not chat.forum:
            raise ServerError(400, "CHANNEL_FORUM_MISSING")
        return chat

    def _topics(self, chat: SimChat, ids: list[int]) -> TLObject:
        return types.messages.ForumTopics(count=len(chat.topics), topics=[chat.forum_topic(i) for i in ids],
                                          messages=[], chats=[chat.tl()], users=[], pts=1)

    def _on_GetForumTopicsRequest(self, account: Account, r: Any) -> TLObject:
        """Topics newest first, ``limit`` at a time below ``offset_topic`` (0: from the newest)."""
        chat = self._forum(r.peer)
        ids = sorted((i for i in chat.topics if not r.offset_topic or i < r.offset_topic), reverse=True)
        return self._topics(chat, ids[: max(0, min(r.limit or 100, 100))])

    def _on_GetForumTopicsByIDRequest(self, account: Account, r: Any) -> TLObject:
        chat = self._forum(r.peer)
        return self._topics(chat, [i for i in r.topics if i in chat.topics])
