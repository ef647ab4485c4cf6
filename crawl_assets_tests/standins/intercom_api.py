"""An Intercom REST stand-in: ``POST /conversations/search`` and ``GET /conversations/{id}``.

Speaks Intercom's shapes: ``conversation.list`` pages with ``pages.next.starting_after`` (an opaque
cursor), the ``updated_at`` query with ``>``/``<`` operators, ``sort`` by ``updated_at``, ``per_page``
bounded to 150 (400 ``parameter_invalid``), bearer tokens bound to one workspace each (401
``unauthorized`` ``error.list``), 404 ``not_found``, and ``X-RateLimit-Limit``/``-Remaining``/``-Reset``
(epoch seconds) with 429 ``rate_limit_exceeded`` once a token's window is spent.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass, field
from typing import Any

from crawl_assets_tests.standins.http_base import Refuse, Reply, Request, StandIn


def _error(status: int, code: str, message: str) -> Refuse:
    return Refuse(status, {"type": "error.list", "request_id": "req-1", "errors": [{"code": code, "message": message}]})


def make_conversation(cid: int, created: int, updated: int, *, parts: int = 2, text: str = "Hello, my app crashes",
                      user_id: str = "u1") -> dict[str, Any]:
    """A conversation as ``GET /conversations/{id}`` returns it: a user's opening message, then
    alternating admin replies and user comments, plus one assignment part without a body."""
    convo_parts = []
    for n in range(parts):
        admin = n % 2 == 0
        convo_parts.append({
            "type": "conversation_part", "id": str(cid * 100 + n + 1), "part_type": "comment",
            "body": f"<p>{'Thanks, we are on it' if admin else 'Still broken'} #{n}</p>",
            "created_at": created + 60 * (n + 1), "updated_at": created + 60 * (n + 1), "notified_at": created,
            "assigned_to": None, "attachments": [], "external_id": None, "redacted": False,
            "author": {"type": "admin", "id": "991", "name": "Sara (support)", "email": "sara@example.com"} if admin
            else {"type": "user", "id": user_id, "name": "Joe", "email": "joe@example.com"},
        })
    convo_parts.append({"type": "conversation_part", "id": str(cid * 100 + 99), "part_type": "assignment", "body": None,
                        "created_at": created + 5, "updated_at": created + 5, "attachments": [], "redacted": False,
                        "author": {"type": "bot", "id": "7", "name": "Operator"}})
    return {
        "type": "conversation", "id": str(cid), "created_at": created, "updated_at": updated, "waiting_since": None,
        "title": None, "state": "open", "open": True, "read": True, "priority": "not_priority",
        "admin_assignee_id": 991, "team_assignee_id": None,
        "tags": {"type": "tag.list", "tags": [{"type": "tag", "id": "1", "name": "bug"}]},
        "source": {"type": "conversation", "id": str(cid * 1000), "delivered_as": "customer_initiated",
                   "subject": "", "body": f"<p>{text}</p>", "attachments": [], "url": None, "redacted": False,
                   "author": {"type": "user", "id": user_id, "name": "Joe", "email": "joe@example.com"}},
        "contacts": {"type": "contact.list", "contacts": [{"type": "contact", "id": user_id, "external_id": None}]},
        "conversation_parts": {"type": "conversation_part.list", "conversation_parts": convo_parts,
                               "total_count": len(convo_parts)},
    }


@dataclass
class _Window:
    start: float
    used: int = 0


@dataclass
class IntercomServer(StandIn):
    """``workspaces`` maps an access token to (workspace id, its conversations)."""

    workspaces: dict[str, tuple[str, list[dict[str, Any]]]] = field(default_factory=dict)
    rate_limit: int = 10_000
    window_seconds: float = 10.0

    def __post_init__(self) -> None:
        super().__init__()
        self._windows: dict[str, _Window] = {}

    def endpoint_of(self, req: Request) -> str:
        return "search" if req.path == "/conversations/search" else "conversation"

    def _workspace(self, req: Request) -> tuple[str, list[dict[str, Any]]]:
        token = req.headers.get("authorization", "").removeprefix("Bearer ")
        if token not in self.workspaces:
            raise _error(401, "unauthorized", "Access Token Invalid")
        return self.workspaces[token]

    def _budget(self, token: str) -> dict[str, str]:
        now = time.time()
        window = self._windows.get(token)
        if window is None or now >= window.start + self.window_seconds:
            window = self._windows[token] = _Window(now)
        reset = str(int(window.start + self.window_seconds) + 1)
        if window.used >= self.rate_limit:
            raise Refuse(429, {"type": "error.list", "errors": [{"code": "rate_limit_exceeded",
                                                                 "message": "Exceeded rate limit"}]},
                         {"X-RateLimit-Limit": str(self.rate_limit), "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset})
        window.used += 1
        return {"X-RateLimit-Limit": str(self.rate_limit), "X-RateLimit-Remaining": str(self.rate_limit - window.used),
                "X-RateLimit-Reset": reset}

    def route(self, req: Request) -> Reply:
        _, conversations = self._workspace(req)
        headers = self._budget(req.headers["authorization"])
        if req.path == "/conversations/search" and req.method == "POST":
            return Reply(200, self._search(req.json() or {}, conversations), headers)
        if req.path.startswith("/conversations/") and req.method == "GET":
            cid = req.path.rsplit("/", 1)[1]
            for conv in conversations:
                if conv["id"] == cid:
                    return Reply(200, conv, headers)
            raise _error(404, "not_found", "Resource Not Found")
        raise _error(404, "not_found", "Resource Not Found")

    def _search(self, body: dict[str, Any], conversations: list[dict[str, Any]]) -> dict[str, Any]:
        query, pagination = body.get("query") or {}, body.get("pagination") or {}
        per_page = int(pagination.get("per_page") or 20)
        if not 1 <= per_page <= 150:
            raise _error(400, "parameter_invalid", "per_page must be between 1 and 150")
        if query.get("field") != "updated_at" or query.get("operator") not in (">", "<"):
            raise _error(400, "parameter_invalid", "unsupported query")
        value = int(query["value"])
        hits = [c for c in conversations if (c["updated_at"] > value if query["operator"] == ">" else c["updated_at"] < value)]
        hits.sort(key=lambda c: (c["updated_at"], int(c["id"])))
        start = 0
        if pagination.get("starting_after"):
            try:
                start = int(base64.b64decode(pagination["starting_after"]).decode())
            except ValueError:
                raise _error(400, "parameter_invalid", "starting_after is invalid") from None
        page = hits[start:start + per_page]
        pages: dict[str, Any] = {"type": "pages", "page": start // per_page + 1, "per_page": per_page,
                                 "total_pages": max(1, -(-len(hits) // per_page))}
        if start + per_page < len(hits):
            pages["next"] = {"page": pages["page"] + 1,
                             "starting_after": base64.b64encode(str(start + per_page).encode()).decode()}
        summaries = [{k: c[k] for k in ("type", "id", "created_at", "updated_at", "state", "source")} for c in page]
        return {"type": "conversation.list", "pages": pages, "total_count": len(hits), "conversations": summaries}
