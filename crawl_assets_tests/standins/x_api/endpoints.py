"""What each X API v2 endpoint answers (``users/by/username``, ``users/:id/tweets``, ``search/recent``,
``search/all``, ``tweets``): the bodies, paging and ``includes`` the server sends on a 200."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from crawl_assets_tests.standins.x_api.wire import (
    ENDPOINT_RANGES, PROBLEMS, TIMELINE_CAP, XError, _as_dt, _invalid, _matches, _parse_time, _public_user, _token,
)
from crawl_assets_tests.standins.x_corpus import Corpus, iso


class Endpoints:
    """The endpoint half of ``XAPIServer``: answers from ``corpus`` for a request already authorized."""

    corpus: Corpus
    full_archive_tokens: set[str]
    max_results_cap: dict[str, int]

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
        corpus = self.corpus
        withheld = {i for i in ids if i in corpus.tweets
                    and corpus.tweets[i]["author_id"] in corpus.protected | corpus.suspended}
        found = [corpus.tweets[i] for i in ids if i in corpus.tweets and i not in withheld]
        # X answers a protected author's post and a suspended author's post alike: an authorization error
        errors = [{"value": i, "detail": f"Could not find tweet with ids: [{i}].", "title": "Not Found Error",
                   "resource_type": "tweet", "parameter": "ids", "resource_id": i,
                   "type": f"{PROBLEMS}/resource-not-found"} if i not in withheld else
                  {"value": i, "detail": f"Sorry, you are not authorized to see the Tweet with ids: [{i}].",
                   "title": "Authorization Error", "resource_type": "tweet", "parameter": "ids", "resource_id": i,
                   "section": "data", "type": f"{PROBLEMS}/not-authorized-for-resource"}
                  for i in ids if i not in corpus.tweets or i in withheld]
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
