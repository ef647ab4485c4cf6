"""Telegram ids as records key them: the bare positive chat id of every spelling the inputs use (Bot-API
``-100…`` ids, the shifted peer ids of old Telegram Desktop exports), and message keys."""

from __future__ import annotations

from typing import Any

from crawl_assets.normalize.build import InputError


def message_key(chat_id: str, message_id: str | int) -> str:
    """The record key of a Telegram message (same for every way it was collected)."""
    return f"telegram:{chat_id}:{message_id}"


def bare_chat_id(value: Any, field: str = "id") -> str:
    """The bare positive chat id: Bot-API style ``-100…`` channel ids and negative group ids are unwrapped."""
    if isinstance(value, str) and value.lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"field '{field}': not a chat id: {value!r}"[:200])
    if value < 0:
        digits = str(-value)
        value = int(digits[3:]) if digits.startswith("100") and len(digits) > 12 else -value
    return str(value)


# Telegram Desktop before 2.7.2 (April 2021) wrote a chat's ``id`` as its internal peer id: ``2**32 | id`` for a
# user's chat, ``2**33 | id`` for a group or channel (ids were 31-bit then); from layer 119 (2.4, September 2020)
# until 2.7.2 ``from_id``/``reply_to_peer_id`` were numbers spelled the same way (later exports: "user123").
_SHIFTED_PEERS = {1: "user", 2: "chat"}


def shifted_peer(value: Any) -> tuple[str, str] | None:
    """(peer type, bare id) of an old Telegram Desktop export's shifted peer id, or None when ``value`` is not one."""
    if isinstance(value, int) and not isinstance(value, bool) and value >> 32 in _SHIFTED_PEERS and value & 0xFFFFFFFF < 2**31:
        return _SHIFTED_PEERS[value >> 32], str(value & 0xFFFFFFFF)
    return None


def legacy_export_message(message: Any) -> bool:
    """Whether an export message comes from Telegram Desktop before 2.7.2: no ``date_unixtime`` (2022) and a
    sender that is no ``user123``/``channel123`` string (a number, or none before layer 119)."""
    return isinstance(message, dict) and "date_unixtime" not in message and not isinstance(message.get("from_id"), str)


def export_chat_id(value: Any, message: Any) -> str:
    """The bare chat id of an export's chat ``id``, shifted by Telegram Desktop before 2.7.2 (told by ``message``)."""
    if legacy_export_message(message):
        shifted = shifted_peer(value)
        if shifted is not None:
            return shifted[1]
    return bare_chat_id(value)


def export_bare_id(node: dict[str, Any], value: Any) -> Any:
    """The bare id ``value`` stands for in ``node``: a shifted peer id in a message of a Telegram Desktop export
    before 2.7.2 (``from_id``, ``actor_id``), else ``value`` itself (Telethon objects carry a ``_`` type name)."""
    if "_" not in node and node.get("type") in ("message", "service") and legacy_export_message(node):
        shifted = shifted_peer(value)
        if shifted is not None:
            return shifted[1]
    return value


def shifted_spellings(raw: str) -> tuple[str, ...]:
    """How a Telegram Desktop export before 2.7.2 may spell the bare id ``raw`` (as a user, or a chat/channel)."""
    if not raw.isdigit() or int(raw) >= 2**31:
        return ()
    return tuple(str(shift << 32 | int(raw)) for shift in _SHIFTED_PEERS)
