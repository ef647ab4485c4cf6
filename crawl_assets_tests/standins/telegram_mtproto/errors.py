"""The RPC errors of the simulated server."""

from __future__ import annotations


class ServerError(Exception):
    """An RPC error the simulated server answers with (turned into Telethon's own exception class)."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code, self.message = code, message
