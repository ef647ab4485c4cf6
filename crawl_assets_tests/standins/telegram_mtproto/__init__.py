"""Telegram at the MTProto request level: a stand-in for Telethon's ``MTProtoSender``.

Telethon sends every request through its client's ``MTProtoSender``: ``sender.send(request)``
returns a future resolved with the parsed result (``network/mtprotosender.py``: ``RequestState``
serializes the request, the receive loop parses ``state.request.read_result(reader)`` or turns an
``rpc_error`` into ``errors.rpc_message_to_error(rpc_error, state.request)``). ``StandinSender``
keeps that contract without a socket: it serializes the request with ``bytes(request)``, the
simulated server parses it back with ``BinaryReader.tgread_object()`` (so it sees exactly what would
go on the wire), answers with real TL objects, which are serialized and parsed again by the
request's own ``read_result``. Errors are built by Telethon's own ``rpc_message_to_error``. So
``connect()`` (``InvokeWithLayer(InitConnection(GetConfig))``, ``get_me``, ``GetState``,
``GetDifference``), ``iter_messages`` paging, the entity cache and flood-wait handling all run
unmodified.

The simulated channel is generated lazily from message ids (a million messages cost no memory);
edits, deletions and counter bumps are small overrides. A channel can have a linked discussion group
whose comment threads answer ``GetDiscussionMessage`` and ``GetReplies``.

Modules: ``chats`` (the simulated chats and their messages), ``accounts`` (accounts and the server half of
two-step verification), ``world`` (the simulated server: faults, request counts, one handler per request
type; ``forum`` has the forum topics' handlers, ``flood`` its flood control, ``errors`` its RPC errors),
``sender`` (the sender Telethon talks to, and ``use``/``release`` to plug it in), ``network`` (the same on
real sockets: data centres speaking Telegram's TCP transports, SOCKS5/HTTP proxies and an MTProxy in front).
"""

from crawl_assets_tests.standins.telegram_mtproto.accounts import (
    SRP_G, SRP_P, Account, account_key, srp_challenge, srp_expected_m1, srp_verifier,
)
from crawl_assets_tests.standins.telegram_mtproto.chats import (
    BASE, COMMENTER, ORIGIN_CHANNEL_ID, TEMPLATES, SimChat, entities_for, iter_existing, utf16_len,
)
from crawl_assets_tests.standins.telegram_mtproto.sender import (
    VECTOR, StandinSender, answer, release, sender_for, session_for, use,
)
from crawl_assets_tests.standins.telegram_mtproto.clock import SimClock
from crawl_assets_tests.standins.telegram_mtproto.network import (
    EGRESS, DataCenter, MTProxy, Network, Proxy, forget_telethon_config,
)
from crawl_assets_tests.standins.telegram_mtproto.flood import FloodControl
from crawl_assets_tests.standins.telegram_mtproto.world import Fault, ServerError, World

__all__ = [
    "BASE", "COMMENTER", "ORIGIN_CHANNEL_ID", "SRP_G", "SRP_P", "TEMPLATES", "VECTOR",
    "EGRESS", "Account", "DataCenter", "Fault", "FloodControl", "MTProxy", "Network", "Proxy", "ServerError", "SimChat", "SimClock",
    "StandinSender", "World", "forget_telethon_config",
    "account_key", "answer", "entities_for", "iter_existing", "release", "sender_for", "session_for", "srp_challenge",
    "srp_expected_m1", "srp_verifier", "use", "utf16_len",
]
