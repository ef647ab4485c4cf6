"""The common frame of the REST stand-ins (Discourse, Google Play, Intercom, Hacker News, webhooks'
senders): a real HTTP/1.1 server on 127.0.0.1 in a thread, a request log, and injectable faults.

A stand-in subclasses :class:`StandIn` and implements ``route(req) -> Reply``; raising :class:`Refuse`
answers with an error status and the API's own error body. Faults queued with :meth:`StandIn.inject`
replace the next matching answers (a status with a body, ``drop`` to close the connection, ``malformed``
for a broken JSON body), so tests assert on what the client did, not on timing.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body) if self.body else None

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[0] if values else default


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # JSON-serializable, or bytes sent as is
    headers: dict[str, str] = field(default_factory=dict)


class Refuse(Exception):
    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None):
        super().__init__(status)
        self.reply = Reply(status, body, headers or {})


@dataclass
class Fault:
    kind: str  # an HTTP status as text ("429", "500", ...), "drop" or "malformed"
    endpoint: str | None = None  # match on the logged endpoint name (None: any)
    times: int = 1
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None


@dataclass
class Logged:
    endpoint: str
    method: str
    path: str
    query: dict[str, list[str]]
    status: int
    body: bytes = b""


class StandIn:
    """Subclasses set ``endpoint_of(req)`` (a short name for logs and faults) and ``route(req)``."""

    def __init__(self) -> None:
        self.faults: list[Fault] = []
        self.log: list[Logged] = []
        self.lock = threading.RLock()
        self._httpd: ThreadingHTTPServer | None = None

    # -- to implement -------------------------------------------------------------------------------
    def endpoint_of(self, req: Request) -> str:
        return req.path

    def route(self, req: Request) -> Reply:
        raise NotImplementedError

    def fault_reply(self, fault: Fault) -> Reply:
        return Reply(int(fault.kind), fault.body if fault.body is not None else {"error": f"injected {fault.kind}"},
                     dict(fault.headers))

    # -- test API -------------------------------------------------------------------------------------
    def inject(self, kind: str, endpoint: str | None = None, times: int = 1, **kwargs: Any) -> None:
        with self.lock:
            self.faults.append(Fault(kind, endpoint, times, **kwargs))

    def counts(self) -> Counter[str]:
        return Counter(entry.endpoint for entry in self.log)

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "StandIn":
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

            def _any(self) -> None:
                stand_in._serve(self)

            do_GET = do_POST = do_PUT = do_DELETE = _any  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- serving --------------------------------------------------------------------------------------
    def _take_fault(self, endpoint: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.endpoint in (None, endpoint) and fault.times > 0:
                    fault.times -= 1
                    if fault.times == 0:
                        self.faults.remove(fault)
                    return fault
        return None

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        split = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        req = Request(handler.command, split.path, parse_qs(split.query, keep_blank_values=True),
                      {k.lower(): v for k, v in handler.headers.items()}, handler.rfile.read(length) if length else b"")
        endpoint = self.endpoint_of(req)
        fault = self._take_fault(endpoint)
        if fault is not None and fault.kind == "drop":
            self.log.append(Logged(endpoint, req.method, req.path, req.query, 0, req.body))
            handler.close_connection = True
            handler.connection.shutdown(2)
            return
        if fault is not None and fault.kind == "malformed":
            reply = Reply(200, b'{"truncated": [1, 2')
        elif fault is not None:
            reply = self.fault_reply(fault)
        else:
            try:
                with self.lock:
                    reply = self.route(req)
            except Refuse as refusal:
                reply = refusal.reply
        self.log.append(Logged(endpoint, req.method, req.path, req.query, reply.status, req.body))
        data = reply.body if isinstance(reply.body, bytes) else orjson.dumps(reply.body)
        handler.send_response(reply.status)
        handler.send_header("Content-Type", reply.headers.pop("Content-Type", "application/json; charset=utf-8"))
        handler.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
