"""The raw line of the REST sources and of webhook deliveries: the API's answer (or the delivered body) as
received, wrapped with what it does not say.

``{"crawl": {"endpoint": ..., "host"/"package"/"workspace": ..., "retrieved_at": ...}, "response": <body>}``

The line format only, below every layer that writes it (the sync engines in ``sources/``, the webhook landing
in ``lake/landing.py``); reading it back into records is ``crawl_assets.normalize.envelope``.
"""

from __future__ import annotations

from typing import Any

import orjson

# The "_" of the raw line a collector writes when a post it stored is gone (X, Telegram): a tombstone to the
# normalizer
DELETED = "crawl_assets.deleted"


def wrap_line(body: bytes, **crawl: Any) -> bytes:
    """One raw lake line. The body's bytes are kept; only newlines, which in valid JSON can only be
    whitespace between tokens (inside strings they are escaped), become spaces so it fits on one line."""
    return b'{"crawl":' + orjson.dumps(crawl) + b',"response":' + body.replace(b"\r", b" ").replace(b"\n", b" ") + b"}"
