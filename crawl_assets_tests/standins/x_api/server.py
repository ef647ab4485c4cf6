"""``XAPIServer``: the HTTP server thread, test controls (faults, limits, request log), auth and rate limits."""

from __future__ import annotations

import math
import re
import socket
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from crawl_assets_tests.standins.x_api.endpoints import Endpoints
from crawl_assets_tests.standins.x_api.wire import Fault, LoggedRequest, XError, _too_many, _Window
from crawl_assets_tests.standins.x_corpus import Corpus


class XAPIServer(Endpoints):
    """Serve ``corpus`` on a random port of 127.0.0.1. Use as a context manager; ``url`` is the base URL."""

    def __init__(self, corpus: Corpus, *, tokens: set[str] | None = None, full_archive_tokens: set[str] | None = None,
                 rate_limit: int = 10_000, window_seconds: float = 900.0, timeout_sleep: float = 2.0):
        self.corpus = corpus
        self.tokens = tokens if tokens is not None else {"test-token"}
        self.full_archive_tokens = full_archive_tokens if full_archive_tokens is not None else set(self.tokens)
        self.limits: dict[str, tuple[int, float]] = {}  # endpoint -> (requests per window, window seconds)
        self.default_limit = (rate_limit, window_seconds)
        self.max_results_cap: dict[str, int] = {}  # lower an endpoint's max (e.g. an account tier)
        self.timeout_sleep = timeout_sleep
        self.faults: list[Fault] = []
        self.log: list[LoggedRequest] = []
        self._windows: dict[tuple[str, str], _Window] = {}
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self) -> "XAPIServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                server._handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # -- test controls ---------------------------------------------------------------------------
    def inject(self, kind: str, endpoint: str | None = None, *, times: int = 1, after: int = 0) -> None:
        self.faults.append(Fault(kind, endpoint, times, after))

    def set_limit(self, endpoint: str, requests: int, window_seconds: float) -> None:
        self.limits[endpoint] = (requests, window_seconds)

    def counts(self) -> Counter[str]:
        return Counter(r.endpoint for r in self.log)

    def statuses(self) -> Counter[int]:
        return Counter(r.status for r in self.log)

    def clear_log(self) -> None:
        self.log.clear()

    # -- request handling -------------------------------------------------------------------------
    def _route(self, path: str) -> tuple[str, dict[str, str]]:
        for endpoint, pattern in (
            ("users/by/username", r"^/2/users/by/username/([^/]+)$"),
            ("users/tweets", r"^/2/users/(\d+)/tweets$"),
            ("search/recent", r"^/2/tweets/search/recent$"),
            ("search/all", r"^/2/tweets/search/all$"),
            ("tweets", r"^/2/tweets$"),
        ):
            m = re.match(pattern, path)
            if m:
                return endpoint, {"path_arg": m.group(1)} if m.groups() else {}
        return "unknown", {}

    def _take_fault(self, endpoint: str) -> Fault | None:
        """The first due fault for this request; every pending fault counts it toward its ``after``."""
        chosen = None
        for fault in self.faults:
            if fault.endpoint not in (None, endpoint) or fault.times <= 0:
                continue
            if fault.after > 0:
                fault.after -= 1
            elif chosen is None:
                chosen = fault
                fault.times -= 1
        return chosen

    def _rate_headers(self, endpoint: str, token: str, consume: bool) -> tuple[dict[str, str], bool]:
        limit, window = self.limits.get(endpoint, self.default_limit)
        now = time.time()
        key = (endpoint, token)
        win = self._windows.get(key)
        if win is None or now >= win.start + window:
            win = self._windows[key] = _Window(now)
        allowed = win.used < limit
        if consume and allowed:
            win.used += 1
        headers = {"x-rate-limit-limit": str(limit), "x-rate-limit-remaining": str(max(limit - win.used, 0)),
                   "x-rate-limit-reset": str(math.ceil(win.start + window))}
        return headers, allowed

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        split = urlsplit(req.path)
        params = dict(parse_qsl(split.query, keep_blank_values=True))
        endpoint, args = self._route(split.path)
        token = (req.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        with self._lock:
            fault = self._take_fault(endpoint)
            headers, allowed = self._rate_headers(endpoint, token, consume=fault is None)
        logged = LoggedRequest(endpoint, params, 0, time.time())
        self.log.append(logged)
        try:
            if fault is not None:
                status, body, extra = self._fault_answer(fault, req, headers)
                if status == 0:
                    return
            elif token not in self.tokens:
                status, body, extra = 401, {"title": "Unauthorized", "type": "about:blank", "status": 401,
                                            "detail": "Unauthorized"}, {}
            elif not allowed:
                status, body, extra = 429, _too_many(), {}
            else:
                status, body, extra = 200, self._answer(endpoint, args, params, token), {}
        except XError as err:
            status, body, extra = err.status, err.body, {}
        logged.status = status
        data = body if isinstance(body, bytes) else orjson.dumps(body)
        req.send_response(status)
        req.send_header("Content-Type", "application/json; charset=utf-8")
        req.send_header("Content-Length", str(len(data)))
        for k, v in {**headers, **extra}.items():
            req.send_header(k, v)
        req.end_headers()
        req.wfile.write(data)

    def _fault_answer(self, fault: Fault, req: BaseHTTPRequestHandler, headers: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        kind = fault.kind
        if kind == "drop":
            req.close_connection = True
            try:
                req.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return 0, b"", {}
        if kind == "timeout":
            time.sleep(self.timeout_sleep)
            req.close_connection = True
            return 0, b"", {}
        if kind == "429":
            headers["x-rate-limit-remaining"] = "0"
            return 429, _too_many(), {}
        if kind in ("500", "502", "503"):
            return int(kind), {"title": "Service Unavailable" if kind == "503" else "Internal Server Error",
                               "detail": "Service Unavailable", "type": "about:blank", "status": int(kind)}, {}
        if kind == "malformed":
            return 200, b'{"data":[{"id":"1","text":"trunc', {}
        if kind == "401":
            return 401, {"title": "Unauthorized", "type": "about:blank", "status": 401, "detail": "Unauthorized"}, {}
        if kind == "403":
            return 403, {"title": "Forbidden", "type": "about:blank", "status": 403, "detail": "Forbidden"}, {}
        raise ValueError(f"unknown fault {kind!r}")
