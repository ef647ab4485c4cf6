"""An X API v2 stand-in for tests: real HTTP on 127.0.0.1 (a thread, a random port), real v2 bodies.

Endpoints: ``/2/users/by/username/:u``, ``/2/users/:id/tweets``, ``/2/tweets/search/recent``,
``/2/tweets/search/all``, ``/2/tweets?ids=``, with ``data``/``includes``/``meta`` (``newest_id``,
``oldest_id``, ``result_count``, ``next_token``), paging by token (``pagination_token`` on timelines,
``next_token`` on searches), ``since_id``/``until_id``/``start_time``/``end_time``, ``max_results`` bounds
(400 ``invalid-request`` bodies when out of range), the 3,200-post timeline cap and the 7-day window of
recent search, bearer auth (401), full-archive access (403 ``client-forbidden``), suspended and unknown
users (200 with ``errors`` as X answers them), and rate-limit headers with a per-endpoint budget per
window (429 when exceeded).

Faults are queued with :meth:`XAPIServer.inject` (429, 5xx, timeouts, dropped connections, malformed
bodies, 401/403) and every request is logged (:attr:`XAPIServer.log`, :meth:`XAPIServer.counts`) so tests
assert on requests made, not on timing.
"""

from __future__ import annotations

import math
import re
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from crawl_assets_tests.standins.x_corpus import Corpus, iso

PROBLEMS = "https://api.twitter.com/2/problems"
ENDPOINT_RANGES = {  # (min, max, default) of max_results per endpoint
    "users/tweets": (5, 100, 10),
    "search/recent": (10, 100, 10),
    "search/all": (10, 500, 10),
}
TIMELINE_CAP = 3200


@dataclass
class Fault:
    """What the next matching request gets instead of its answer."""

    kind: str  # "429" | "500" | "503" | "timeout" | "drop" | "malformed" | "401" | "403"
    endpoint: str | None = None
    times: int = 1
    after: int = 0  # matching requests (answered or faulted) that pass before this fault starts


@dataclass
class LoggedRequest:
    endpoint: str
    params: dict[str, str]
    status: int  # 0 when the connection was dropped or timed out
    at: float


@dataclass
class _Window:
    start: float
    used: int = 0


class XError(Exception):
    def __init__(self, status: int, body: dict[str, Any]):
        super().__init__(body.get("detail") or body.get("title"))
        self.status, self.body = status, body


def _invalid(param: str, value: str, message: str) -> XError:
    return XError(400, {"errors": [{"parameters": {param: [value]}, "message": message}],
                        "title": "Invalid Request", "detail": "One or more parameters to your request was invalid.",
                        "type": f"{PROBLEMS}/invalid-request"})


def _parse_time(value: str, param: str) -> datetime:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise _invalid(param, value, f"Invalid '{param}':'{value}'. '{param}' must be a valid RFC3339 date.") from None


class XAPIServer:
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

    # -- endpoints -------------------------------------------------------------------------------
    def _answer(self, endpoint: str, args: dict[str, str], params: dict[str, str], token: str) -> dict[str, Any]:
        if endpoint == "users/by/username":
            return self._user_by_username(args["path_arg"])
        if endpoint == "users/tweets":
            return self._timeline(args["path_arg"], params)
        if endpoint == "search/recent":
            return self._search(params, recent=True)
        if endpoint == "search/all":
            if token not in self.full_archive_tokens:
                raise XError(403, {
                    "client_id": "101", "title": "Client Forbidden", "reason": "client-not-enrolled",
                    "required_enrollment": "Appropriate Level of API Access",
                    "registration_url": "https://developer.x.com/en/portal/product",
                    "detail": "When authenticating requests to the Twitter API v2 endpoints, you must use keys and "
                              "tokens from a Twitter developer App that is attached to a Project. You can create a "
                              "project via the developer portal.",
                    "type": f"{PROBLEMS}/client-forbidden"})
            return self._search(params, recent=False)
        if endpoint == "tweets":
            return self._lookup(params)
        raise XError(404, {"errors": [{"message": "Sorry, that page does not exist", "code": 34}]})

    def _user_by_username(self, username: str) -> dict[str, Any]:
        user = self.corpus.user_by_name(username)
        if user is None:
            return {"errors": [{"value": username, "detail": f"Could not find user with username: [{username}].",
                                "title": "Not Found Error", "resource_type": "user", "parameter": "username",
                                "resource_id": username, "type": f"{PROBLEMS}/resource-not-found"}]}
        if user["id"] in self.corpus.suspended:
            return {"errors": [{"value": username, "detail": f"User has been suspended: [{username}].",
                                "title": "Forbidden", "resource_type": "user", "parameter": "username",
                                "resource_id": username, "type": f"{PROBLEMS}/resource-not-found"}]}
        return {"data": {k: user[k] for k in ("id", "name", "username", "created_at", "protected")}}

    def _page_size(self, endpoint: str, params: dict[str, str]) -> int:
        low, high, default = ENDPOINT_RANGES[endpoint]
        high = min(high, self.max_results_cap.get(endpoint, high))
        raw = params.get("max_results")
        if raw is None:
            return min(default, high)
        if not raw.isdigit() or not low <= int(raw) <= high:
            raise _invalid("max_results", raw, f"The `max_results` query parameter value [{raw}] is not between {low} and {high}")
        return int(raw)

    def _timeline(self, user_id: str, params: dict[str, str]) -> dict[str, Any]:
        size = self._page_size("users/tweets", params)
        user = self.corpus.users.get(user_id)
        if user is None or user_id in self.corpus.suspended:
            detail = (f"User has been suspended: [{user_id}]." if user is not None
                      else f"Could not find user with id: [{user_id}].")
            return {"errors": [{"value": user_id, "detail": detail, "title": "Forbidden" if user else "Not Found Error",
                                "resource_type": "user", "parameter": "id", "resource_id": user_id,
                                "type": f"{PROBLEMS}/resource-not-found"}]}
        if user_id in self.corpus.protected:
            return {"errors": [{"value": user_id, "detail": f"Sorry, you are not authorized to see the user with id: [{user_id}].",
                                "title": "Authorization Error", "resource_type": "user", "parameter": "id",
                                "resource_id": user_id, "type": f"{PROBLEMS}/not-authorized-for-resource"}]}
        posts = [t for t in self.corpus.visible() if t["author_id"] == user_id][:TIMELINE_CAP]
        return self._paged(posts, params, size, token_param="pagination_token")

    def _search(self, params: dict[str, str], *, recent: bool) -> dict[str, Any]:
        endpoint = "search/recent" if recent else "search/all"
        query = params.get("query", "").strip()
        if not query:
            raise _invalid("query", "", "The `query` query parameter can not be empty")
        limit = 512 if recent else 1024
        if len(query) > limit:
            raise _invalid("query", query, f"There were errors processing your request: Rules must be {limit} "
                                           f"characters or less (at position 1)")
        size = self._page_size(endpoint, params)
        now = datetime.now(timezone.utc)
        floor = now - timedelta(days=7 if recent else 30)
        if "start_time" in params:
            start = _parse_time(params["start_time"], "start_time")
            if recent and start < floor - timedelta(seconds=1):
                raise _invalid("start_time", params["start_time"],
                               f"Invalid 'start_time':'{params['start_time']}'. 'start_time' must be on or after {iso(floor)}")
            floor = start
        elif "since_id" in params or "until_id" in params:
            floor = now - timedelta(days=7) if recent else datetime(2006, 3, 21, tzinfo=timezone.utc)
        terms = query.split()
        posts = [t for t in self.corpus.visible() if _matches(t, terms, self.corpus) and _as_dt(t) >= floor]
        return self._paged(posts, params, size, token_param="next_token")

    def _paged(self, posts: list[dict[str, Any]], params: dict[str, str], size: int, *, token_param: str) -> dict[str, Any]:
        if "since_id" in params:
            posts = [t for t in posts if int(t["id"]) > int(params["since_id"])]
        if "until_id" in params:
            posts = [t for t in posts if int(t["id"]) < int(params["until_id"])]
        if "start_time" in params:
            start = _parse_time(params["start_time"], "start_time")
            posts = [t for t in posts if _as_dt(t) >= start]
        if "end_time" in params:
            end = _parse_time(params["end_time"], "end_time")
            posts = [t for t in posts if _as_dt(t) < end]
        token = params.get(token_param)
        if token:
            try:
                below = int(token, 36)
            except ValueError:
                raise _invalid(token_param, token, f"The `{token_param}` query parameter value [{token}] is not valid") from None
            posts = [t for t in posts if int(t["id"]) < below]
        page = posts[:size]
        meta: dict[str, Any] = {"result_count": len(page)}
        if page:
            meta["newest_id"] = page[0]["id"]
            meta["oldest_id"] = page[-1]["id"]
            if len(posts) > size:
                meta["next_token"] = _token(page[-1]["id"])
        if not page:
            return {"meta": meta}
        return {"data": page, **self._includes(page), "meta": meta}

    def _lookup(self, params: dict[str, str]) -> dict[str, Any]:
        ids = [i for i in params.get("ids", "").split(",") if i]
        if not ids or len(ids) > 100:
            raise _invalid("ids", params.get("ids", ""), f"The number of values in the `ids` query parameter list [{len(ids)}] is not between 1 and 100")
        found = [self.corpus.tweets[i] for i in ids if i in self.corpus.tweets]
        errors = [{"value": i, "detail": f"Could not find tweet with ids: [{i}].", "title": "Not Found Error",
                   "resource_type": "tweet", "parameter": "ids", "resource_id": i,
                   "type": f"{PROBLEMS}/resource-not-found"} for i in ids if i not in self.corpus.tweets]
        out: dict[str, Any] = {}
        if found:
            inc = self._includes(found)
            out = {"data": found, "includes": inc["includes"]}
            errors += inc.get("errors", [])
        if errors:
            out["errors"] = errors
        return out

    def _includes(self, page: list[dict[str, Any]]) -> dict[str, Any]:
        """``includes`` for the contract's expansions; unresolvable references become ``errors``."""
        corpus = self.corpus
        tweets: dict[str, dict[str, Any]] = {}
        errors: list[dict[str, Any]] = []
        in_page = {t["id"] for t in page}
        for t in page:
            for ref in t.get("referenced_tweets", []):
                if ref["id"] in corpus.tweets:
                    if ref["id"] not in in_page:
                        tweets[ref["id"]] = corpus.tweets[ref["id"]]
                else:
                    errors.append({"value": ref["id"], "detail": f"Could not find tweet with referenced_tweets.id: [{ref['id']}].",
                                   "title": "Not Found Error", "resource_type": "tweet", "parameter": "referenced_tweets.id",
                                   "resource_id": ref["id"], "type": f"{PROBLEMS}/resource-not-found"})
        user_ids: dict[str, None] = {}
        for t in [*page, *tweets.values()]:
            user_ids[t["author_id"]] = None
            for m in t.get("entities", {}).get("mentions", []):
                user_ids[m["id"]] = None
        users = [_public_user(corpus.users[u]) for u in user_ids if u in corpus.users]
        media_keys = [k for t in page for k in t.get("attachments", {}).get("media_keys", [])]
        media = [corpus.media[k] for k in media_keys if k in corpus.media]
        includes: dict[str, Any] = {"users": users}
        if tweets:
            includes["tweets"] = list(tweets.values())
        if media:
            includes["media"] = media
        out: dict[str, Any] = {"includes": includes}
        if errors:
            out["errors"] = errors
        return out


def _public_user(user: dict[str, Any]) -> dict[str, Any]:
    return dict(user)


def _too_many() -> dict[str, Any]:
    return {"title": "Too Many Requests", "detail": "Too Many Requests", "type": "about:blank", "status": 429}


def _token(tid: str) -> str:
    """An opaque, stable next token (X's never expire): the position below the last id served."""
    return _b36(int(tid))


def _b36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out or "0"


def _as_dt(tweet: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(tweet["created_at"].replace("Z", "+00:00"))


def _matches(tweet: dict[str, Any], terms: list[str], corpus: Corpus) -> bool:
    text = (tweet.get("note_tweet", {}).get("text") or tweet["text"]).lower()
    for term in terms:
        if term.startswith("from:"):
            user = corpus.users.get(tweet["author_id"], {})
            if user.get("username", "").lower() != term[5:].lower():
                return False
        elif term.lower() not in text:
            return False
    return True
