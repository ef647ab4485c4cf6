"""A transparent HTTP proxy in front of a real Elasticsearch node, for fault injection.

Every request is forwarded byte for byte to the node and its answer returned, except the ones a fault
armed in ``proxy.faults`` picks (matched by a substring of the path, ``_bulk`` by default):

* ``fail_requests(n, status)``: answer ``status`` (429, 503, ...) with an Elasticsearch error body, not forwarded;
* ``drop_connections(n, after_apply=False)``: close the client's connection without an answer, before
  forwarding (nothing applied) or after (applied, the answer lost on the wire);
* ``slow(seconds, n=None)``: forward after a delay;
* ``reject_items(ids, times=1, status=429, ...)``: bulk items with these ``_id``s are taken out of the
  forwarded request and answered as that per-item error (an ``es_rejected_execution_exception`` 429 by
  default, or e.g. a 400 ``document_parsing_exception`` with ``times=None``: refused until cleared),
  exactly as the node answers an item it did not apply.

``proxy.stats`` counts what was done. Use as a context manager: ``with FaultProxy(node_url) as p: p.url``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection", "te",
              "upgrade", "trailer"}
REQUEST_ERRORS = {
    429: ("es_rejected_execution_exception", "rejected execution of coordinating operation (injected by the test proxy)"),
    500: ("internal_server_error", "injected internal error"),
    502: ("bad_gateway", "injected bad gateway"),
    503: ("cluster_block_exception", "blocked by: [SERVICE_UNAVAILABLE/2/no master];"),
    504: ("timeout_exception", "injected gateway timeout"),
}


def error_body(status: int, etype: str, reason: str) -> bytes:
    cause = {"type": etype, "reason": reason}
    return orjson.dumps({"error": {"root_cause": [cause], **cause}, "status": status})


@dataclass
class ItemRule:
    times: int | None  # None: every time until cleared
    status: int
    type: str
    reason: str


@dataclass
class Faults:
    """The fault plan (thread-safe); each ``fail``/``drop``/``slow`` is consumed by the requests it meets."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    request_errors: list[tuple[str, int]] = field(default_factory=list)
    drops: list[tuple[str, bool]] = field(default_factory=list)
    delays: list[tuple[str, float]] = field(default_factory=list)
    delay_forever: tuple[str, float] | None = None
    items: dict[str, ItemRule] = field(default_factory=dict)
    unknown_params: set[str] = field(default_factory=set)

    def refuse_parameter(self, name: str) -> None:
        """Answer requests carrying query parameter ``name`` as a server that does not know it does
        (400, the body a real 8.14 node gives for ``include_source_on_error``), until cleared."""
        with self.lock:
            self.unknown_params.add(name)

    def fail_requests(self, n: int, status: int = 429, path: str = "_bulk") -> None:
        with self.lock:
            self.request_errors += [(path, status)] * n

    def drop_connections(self, n: int, *, after_apply: bool = False, path: str = "_bulk") -> None:
        with self.lock:
            self.drops += [(path, after_apply)] * n

    def slow(self, seconds: float, n: int | None = None, path: str = "_bulk") -> None:
        with self.lock:
            if n is None:
                self.delay_forever = (path, seconds)
            else:
                self.delays += [(path, seconds)] * n

    def reject_items(self, ids: Iterable[str], times: int | None = 1, *, status: int = 429,
                     type_: str = "es_rejected_execution_exception",
                     reason: str = "rejected execution of primary operation (injected by the test proxy)") -> None:
        with self.lock:
            for doc_id in ids:
                self.items[str(doc_id)] = ItemRule(times, status, type_, reason)

    def refuse_items(self, ids: Iterable[str], *, type_: str = "document_parsing_exception",
                     reason: str = "failed to parse (injected by the test proxy)") -> None:
        """Items refused for good (a 400, as for a document the mapping refuses) until ``clear()``."""
        self.reject_items(ids, None, status=400, type_=type_, reason=reason)

    def clear(self) -> None:
        with self.lock:
            self.request_errors.clear()
            self.drops.clear()
            self.delays.clear()
            self.delay_forever = None
            self.items.clear()
            self.unknown_params.clear()

    def pending(self) -> list[str]:
        """Armed one-shot faults not met yet (``[]`` once every request fault and item rejection fired)."""
        with self.lock:
            out = [f"{status} on {path}" for path, status in self.request_errors]
            out += [f"drop on {path}" for path, _ in self.drops] + [f"delay on {path}" for path, _ in self.delays]
            out += [f"item {i} x{r.times}" for i, r in self.items.items() if r.times]
            return out

    def _take(self, items: list, path: str) -> Any:
        for n, entry in enumerate(items):
            if entry[0] in path:
                return items.pop(n)[1]
        return None

    def for_request(self, path: str) -> tuple[int | None, bool | None, float]:
        """(status to answer, drop before/after, delay) for one request; consumes what it returns."""
        with self.lock:
            status = self._take(self.request_errors, path)
            drop = None if status is not None else self._take(self.drops, path)
            delay = self._take(self.delays, path) or 0.0
            if not delay and self.delay_forever and self.delay_forever[0] in path:
                delay = self.delay_forever[1]
            return status, drop, delay

    def item_rule(self, doc_id: str) -> ItemRule | None:
        with self.lock:
            rule = self.items.get(doc_id)
            if rule is None or rule.times == 0:
                return None
            if rule.times is not None:
                rule.times -= 1
            return rule


class FaultProxy:
    def __init__(self, upstream: str, host: str = "127.0.0.1") -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 9200)
        self.faults = Faults()
        self.stats: Counter[str] = Counter()
        self._stats_lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="es-fault-proxy", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def count(self, key: str, n: int = 1) -> None:
        with self._stats_lock:
            self.stats[key] += n

    def __enter__(self) -> "FaultProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)


def _handler_for(proxy: FaultProxy) -> type[BaseHTTPRequestHandler]:
    from crawl_assets_tests.es_node.proxy_bulk import split_bulk, merge_bulk_response

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        upstream: http.client.HTTPConnection | None = None

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            pass

        def _forward(self, method: str, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | {"accept-encoding"}}
            headers["Content-Length"] = str(len(body))
            for attempt in (1, 2):  # a kept-alive upstream connection the node closed: reconnect once
                if self.upstream is None:
                    self.upstream = http.client.HTTPConnection(*proxy.upstream, timeout=300)
                try:
                    self.upstream.request(method, self.path, body=body if body or method in ("POST", "PUT") else None,
                                          headers=headers)
                    resp = self.upstream.getresponse()
                    return resp.status, resp.getheaders(), resp.read()
                except (http.client.HTTPException, ConnectionError, socket.timeout):
                    self.upstream.close()
                    self.upstream = None
                    if attempt == 2:
                        raise
            raise AssertionError("unreachable")

        def _answer(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
            self.send_response(status)
            for key, value in headers:
                if key.lower() not in HOP_BY_HOP:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _drop(self) -> None:
            proxy.count("dropped")
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            proxy.count("requests")
            path, _, query = self.path.partition("?")
            if path.rstrip("/").endswith("_bulk"):
                proxy.count("bulk requests")
            unknown = [p.split("=")[0] for p in query.split("&") if p.split("=")[0] in proxy.faults.unknown_params]
            if unknown:
                proxy.count("unknown parameter")
                reason = f"request [{path}] contains unrecognized parameter: [{unknown[0]}]"
                self._answer(400, [("Content-Type", "application/json"), ("X-Elastic-Product", "Elasticsearch")],
                             error_body(400, "illegal_argument_exception", reason))
                return
            status, drop, delay = proxy.faults.for_request(self.path)
            if delay:
                proxy.count("delayed")
                time.sleep(delay)
            if status is not None:
                etype, reason = REQUEST_ERRORS.get(status, ("injected_error", f"injected {status}"))
                proxy.count(f"injected {status}")
                self._answer(status, [("Content-Type", "application/json"), ("X-Elastic-Product", "Elasticsearch")],
                             error_body(status, etype, reason))
                return
            if drop is False:
                self._drop()
                return
            rejected: list[tuple[int, str, ItemRule]] = []
            if "_bulk" in self.path and self.command in ("POST", "PUT") and proxy.faults.items:
                body, rejected = split_bulk(body, proxy.faults.item_rule)
                proxy.count("rejected items", len(rejected))
            if rejected and not body:
                code, headers, answer = 200, [("Content-Type", "application/json"),
                                              ("X-Elastic-Product", "Elasticsearch")], b'{"errors":false,"items":[]}'
            else:
                code, headers, answer = self._forward(self.command, body)
            if rejected and code == 200:
                answer = merge_bulk_response(answer, rejected)
            if drop is True:
                self._drop()
                return
            self._answer(code, headers, answer)

        def do_GET(self) -> None:
            self._handle()

        do_POST = do_PUT = do_DELETE = do_HEAD = do_GET

    return Handler


@contextlib.contextmanager
def spawn(upstream: str, *args: str) -> Iterator[str]:
    """A proxy in its own process (``main``'s options) in front of ``upstream``; yields its URL.

    Memory tests use this so the proxy's buffers are not counted as the client's."""
    proc = subprocess.Popen([sys.executable, "-m", "crawl_assets_tests.es_node.proxy", upstream, *args],
                            stdout=subprocess.PIPE, text=True, cwd=str(Path(__file__).resolve().parents[2]))
    try:
        url = (proc.stdout.readline() if proc.stdout else "").strip()
        if not url.startswith("http"):
            raise RuntimeError(f"the fault proxy did not start (exit code {proc.poll()})")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> None:
    """Serve in the foreground: prints the URL on the first line of stdout, runs until terminated."""
    parser = argparse.ArgumentParser(description="transparent fault proxy in front of an Elasticsearch node")
    parser.add_argument("upstream")
    parser.add_argument("--slow", type=float, default=0.0, help="delay every bulk request by this many seconds")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with FaultProxy(args.upstream) as proxy:
        if args.slow:
            proxy.faults.slow(args.slow)
        print(proxy.url, flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
