"""A synthetic X corpus shaped like API v2 objects: users, tweets and media, Persian and English.

Tweet ids are real snowflakes made from their creation times, so id order is time order exactly as on X.
The mix covers what collectors and normalizers trip on: replies in chains (so grandparents are missing
from a page's includes), quotes, retweets (truncated ``RT @user:`` text), long posts (``note_tweet``),
edited posts (``edit_history_tweet_ids`` with several ids), mentions with code-point offsets, media,
and replies whose parent was deleted (a dangling reference).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

TWITTER_EPOCH_MS = 1288834974657

PERSIAN = [
    "سلام به همه دوستان",
    "امروز هوا خیلی خوب است",
    "کتاب جدیدی خواندم که بسیار جالب بود",
    "نظر شما درباره این موضوع چیست؟",
    "قیمت‌ها دوباره بالا رفت",
    "جلسه‌ی فردا ساعت ده برگزار می‌شود",
    "این خبر را از دست ندهید",
    "زبان فارسی زیباست",
]
ENGLISH = [
    "Good morning everyone",
    "The new release is out today",
    "What do you think about this?",
    "Prices went up again this week",
    "Reading a great book on data engineering",
    "Meeting moved to tomorrow at ten",
    "Do not miss this news",
    "Open data matters",
]
TOPICS = ["dagster", "tehran", "python", "کتاب", "election", "climate"]


def snowflake(when: datetime, seq: int = 0) -> str:
    """The id X would give a post created at ``when`` (sequence bits keep ids unique within a ms)."""
    ms = int(when.timestamp() * 1000)
    return str(((ms - TWITTER_EPOCH_MS) << 22) | (seq & 0x3FFFFF))


def iso(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


@dataclass
class Corpus:
    """Everything the stand-in serves. ``hidden`` tweets exist (fetchable by id) but appear in no
    timeline or search: edited-away versions and posts of accounts nobody follows."""

    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    tweets: dict[str, dict[str, Any]] = field(default_factory=dict)
    media: dict[str, dict[str, Any]] = field(default_factory=dict)
    hidden: set[str] = field(default_factory=set)
    suspended: set[str] = field(default_factory=set)
    protected: set[str] = field(default_factory=set)
    rng: random.Random = field(default_factory=lambda: random.Random(7))
    _seq: int = 0

    # -- lookups ------------------------------------------------------------------------------
    def user_by_name(self, username: str) -> dict[str, Any] | None:
        for user in self.users.values():
            if user["username"].lower() == username.lower():
                return user
        return None

    def visible(self) -> list[dict[str, Any]]:
        """Listed posts, newest first (the order every v2 list endpoint returns)."""
        out = [t for tid, t in self.tweets.items() if tid not in self.hidden]
        out.sort(key=lambda t: int(t["id"]), reverse=True)
        return out

    # -- building -----------------------------------------------------------------------------
    def add_user(self, username: str, name: str, *, hidden: bool = False) -> dict[str, Any]:
        uid = str(10_000 + len(self.users) * 7919)
        user = {
            "id": uid,
            "name": name,
            "username": username,
            "created_at": "2015-03-01T10:00:00.000Z",
            "description": "حساب آزمایشی" if len(self.users) % 2 else "a test account",
            "protected": False,
            "verified": False,
            "public_metrics": {"followers_count": 100 + len(self.users), "following_count": 50, "tweet_count": 0, "listed_count": 1},
        }
        self.users[uid] = user
        return user

    def _text(self, lang: str) -> str:
        base = self.rng.choice(PERSIAN if lang == "fa" else ENGLISH)
        return f"{base} #{self.rng.choice(TOPICS)}"

    def add_tweet(self, author: dict[str, Any], when: datetime, *, kind: str = "post", lang: str | None = None,
                  parent: dict[str, Any] | None = None, hidden: bool = False, text: str | None = None) -> dict[str, Any]:
        """One post of ``kind`` post/reply/quote/retweet/long/edited at ``when``."""
        self._seq += 1
        lang = lang or ("fa" if self.rng.random() < 0.5 else "en")
        tid = snowflake(when, self._seq)
        body = text or self._text(lang)
        tweet: dict[str, Any] = {
            "id": tid,
            "text": body,
            "author_id": author["id"],
            "created_at": iso(when),
            "conversation_id": tid,
            "lang": lang,
            "edit_history_tweet_ids": [tid],
            "public_metrics": {"retweet_count": self.rng.randint(0, 50), "reply_count": self.rng.randint(0, 9),
                               "like_count": self.rng.randint(0, 500), "quote_count": self.rng.randint(0, 5),
                               "bookmark_count": 0, "impression_count": self.rng.randint(100, 9000)},
            "possibly_sensitive": False,
            "reply_settings": "everyone",
        }
        if parent is not None and kind in ("reply", "quote", "retweet"):
            ref_type = {"reply": "replied_to", "quote": "quoted", "retweet": "retweeted"}[kind]
            tweet["referenced_tweets"] = [{"type": ref_type, "id": parent["id"]}]
            parent_author = self.users.get(parent["author_id"], {"username": "someone"})
            if kind == "reply":
                tweet["conversation_id"] = parent["conversation_id"]
                tweet["in_reply_to_user_id"] = parent["author_id"]
                tweet["text"] = f"@{parent_author['username']} {body}"
                self._mention(tweet, parent_author, 0)
            elif kind == "retweet":
                tweet["text"] = f"RT @{parent_author['username']}: {parent['text']}"[:140]
                tweet["lang"] = parent["lang"]
                self._mention(tweet, parent_author, 3)
        if kind == "long":
            long_text = " ".join([body] * 30)
            tweet["text"] = long_text[:275] + "…"
            tweet["note_tweet"] = {"text": long_text}
        if kind == "media" or (kind == "post" and self.rng.random() < 0.1):
            key = f"3_{tid}"
            self.media[key] = {"media_key": key, "type": "photo", "url": f"https://pbs.twimg.com/media/{tid}.jpg",
                               "width": 1200, "height": 800, "alt_text": "تصویر" if lang == "fa" else "a photo"}
            tweet["attachments"] = {"media_keys": [key]}
        self.tweets[tid] = tweet
        if hidden:
            self.hidden.add(tid)
        author["public_metrics"]["tweet_count"] += 1
        return tweet

    def _mention(self, tweet: dict[str, Any], user: dict[str, Any], start: int) -> None:
        end = start + 1 + len(user["username"])
        tweet.setdefault("entities", {}).setdefault("mentions", []).append(
            {"start": start, "end": end, "username": user["username"], "id": user["id"]})

    def edit(self, original: dict[str, Any], when: datetime) -> dict[str, Any]:
        """A new version of ``original``: the old one is hidden from lists, both share the history."""
        new = self.add_tweet(self.users[original["author_id"]], when, lang=original["lang"],
                             text=original["text"] + (" (ویرایش شد)" if original["lang"] == "fa" else " (edited)"))
        history = [*original["edit_history_tweet_ids"], new["id"]]
        new["conversation_id"] = original["conversation_id"]
        for tid in history:
            self.tweets[tid]["edit_history_tweet_ids"] = history
        self.hidden.add(original["id"])
        return new

    def grow(self, author: dict[str, Any], count: int, *, start: datetime | None = None) -> list[dict[str, Any]]:
        """``count`` new plain posts by ``author`` after everything else (new posts between syncs)."""
        newest = max((int(t["id"]) for t in self.tweets.values()), default=0)
        base = start or datetime.now(timezone.utc) - timedelta(seconds=count + 5)
        base = max(base, datetime.fromtimestamp(((newest >> 22) + TWITTER_EPOCH_MS) / 1000 + 0.001, timezone.utc))
        return [self.add_tweet(author, base + timedelta(seconds=i + 1)) for i in range(count)]


def build_corpus(n_tweets: int = 3000, *, days: float = 30, n_users: int = 6, seed: int = 7,
                 now: datetime | None = None) -> Corpus:
    """A corpus of about ``n_tweets`` listed posts spread over the last ``days`` days."""
    now = now or datetime.now(timezone.utc)
    corpus = Corpus(rng=random.Random(seed))
    names = [("persian_news", "خبرگزاری آزمایشی"), ("data_eng", "Data Eng"), ("shiraz_dev", "توسعه‌دهنده شیراز"),
             ("open_science", "Open Science"), ("tehran_daily", "روزنامه تهران"), ("py_weekly", "Python Weekly"),
             ("kavir", "کویر"), ("nightowl", "Night Owl")]
    users = [corpus.add_user(u, n) for u, n in (names * (n_users // len(names) + 1))[:n_users]]
    outsider = corpus.add_user("outsider", "Not followed")
    rng = corpus.rng
    step = days * 86400 / max(n_tweets, 1)
    start = now - timedelta(days=days)
    # hidden roots by someone nobody follows: thread completion must fetch them by id
    roots = [corpus.add_tweet(outsider, start - timedelta(hours=i + 1), hidden=True) for i in range(20)]
    made: list[dict[str, Any]] = []
    for i in range(n_tweets):
        when = start + timedelta(seconds=i * step + rng.random() * step * 0.5)
        author = rng.choice(users)
        roll = rng.random()
        if roll < 0.18 and (made or roots):
            parent = rng.choice(made[-50:] + roots) if made else rng.choice(roots)
            tweet = corpus.add_tweet(author, when, kind="reply", parent=parent)
        elif roll < 0.26 and made:
            tweet = corpus.add_tweet(author, when, kind="quote", parent=rng.choice(made[-200:]))
        elif roll < 0.34 and made:
            tweet = corpus.add_tweet(author, when, kind="retweet", parent=rng.choice(made[-200:]))
        elif roll < 0.38:
            tweet = corpus.add_tweet(author, when, kind="long")
        elif roll < 0.40 and made:
            tweet = corpus.edit(made.pop(), when)
        elif roll < 0.41:
            # a reply to a post deleted since: the parent id resolves nowhere
            tweet = corpus.add_tweet(author, when, kind="reply", parent={
                "id": snowflake(when - timedelta(days=400), 1), "author_id": outsider["id"],
                "conversation_id": snowflake(when - timedelta(days=400), 1), "text": "", "lang": "en"})
        else:
            tweet = corpus.add_tweet(author, when)
        made.append(tweet)
    return corpus
