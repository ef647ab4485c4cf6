"""The X API v2 wire vocabulary the stand-in speaks: endpoint bounds, fault and log records, problem
bodies, pagination tokens, and the matching of posts to a search query."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from crawl_assets_tests.standins.x_corpus import Corpus

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
