"""What people are shown (the CLI, log lines, the UI's metadata): text that came from outside (registry values,
server errors, file names) with its control and bidirectional-formatting characters escaped, so that no value
can move a terminal's cursor, colour or clear it (ANSI escapes), start a line of its own in a log (CR, LF), or
reorder what is printed around it (the embeddings, overrides and isolates U+202A-U+202E, U+2066-U+2069).

Letters of every script are left as they are, Persian among them, with its zero-width non-joiner (U+200C) and the
directional marks (U+200E, U+200F, U+061C), which change no order but their own.
"""

from __future__ import annotations

_ESCAPED = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F),
            *range(0x2066, 0x206A)]
_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
_TEXT = {c: _NAMED.get(c) or (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _ESCAPED}
# In JSON text the C0 controls inside strings are already escaped by the encoder (and a raw newline is layout);
# the rest becomes JSON's own \uXXXX escape: the decoded value is unchanged.
_JSON = {c: f"\\u{c:04x}" for c in _ESCAPED if c >= 0x7F}


def shown(text: object) -> str:
    """``text`` fit to print on one line: control and bidi-formatting characters as visible escapes (``\\n``,
    ``\\x1b``, ``\\u202e``)."""
    return str(text).translate(_TEXT)


def shown_json(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with the characters :func:`shown` escapes, which its
    encoder leaves raw (DEL, C1 controls, line separators, bidi formatting), as ``\\uXXXX``: the same value."""
    return text.translate(_JSON)
