"""Entity offsets counted in UTF-16 code units (Telegram) mapped onto Python strings.

Telegram's ``offset``/``length`` count UTF-16 code units, so every character outside the Basic
Multilingual Plane (most emoji) shifts Python indexes by one. Text with no such character is sliced
directly (the common case, no copy); otherwise the text is encoded once and sliced in UTF-16.
"""

from __future__ import annotations


class Utf16Text:
    """A text that can be sliced by UTF-16 offsets."""

    __slots__ = ("text", "_encoded")

    def __init__(self, text: str) -> None:
        self.text = text
        astral = bool(text) and max(text) > "\uffff"
        self._encoded = text.encode("utf-16-le", errors="surrogatepass") if astral else None

    def slice(self, offset: int, length: int) -> str:
        """The substring at UTF-16 ``offset`` of UTF-16 ``length`` (clamped to the text; never raises)."""
        if not isinstance(offset, int) or not isinstance(length, int) or offset < 0 or length <= 0:
            return ""
        if self._encoded is None:
            return self.text[offset : offset + length]
        return self._encoded[2 * offset : 2 * (offset + length)].decode("utf-16-le", errors="replace")
