"""An ASGI app over a real socket on 127.0.0.1: uvicorn in a thread, as ``api serve`` and ``webhooks serve`` run it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from crawl_assets_tests.es_node.node import free_port


@contextmanager
def served(app: Any, **config: Any) -> Iterator[str]:
    """``app`` served on a free port (``config``: more ``uvicorn.Config`` options); yields its base URL."""
    port = free_port()
    options = {"log_level": "warning", "lifespan": "off", **config}
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, **options))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
