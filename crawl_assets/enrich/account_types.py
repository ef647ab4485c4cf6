"""Account types and automation signals: per account, documented features and a transparent score made of the
signals that fired, each with its value, threshold and weight. Signals, never a verdict: a score says how many
of the listed patterns an account's observed posts show, not what the account is.

Per record (``extract``): the facts ``account_activity`` keeps (time, kind, text hash) and the client the
platform names (X ``source``; Telegram ``via_bot`` / ``via_bot_id``). Per tenant (``combine``), per
``(platform, author_id)`` over the latest observation of each record:

* the ``account_activity`` features (``hour_entropy``, ``gap_cv``, ``gap_under_60s_share``, shares of reposts and
  replies, duplicate-text ratios, ``posts_per_active_day``);
* ``burstiness`` = (σ − μ) / (σ + μ) of the gaps between posts (−1 clockwork, 0 random, → 1 bursts);
* ``interval_regularity``: the share of gaps within 10% of the median gap (clockwork schedules);
* ``client`` (the most used) and ``client_share``; ``automation_client`` when it names a bot, an API or a scheduler;
* ``account_created_at`` / ``account_age_days`` (at the first post) where known: X ids from 2^40 up are
  Snowflake ids, which carry their creation time.

``score`` = the sum of the weights of the signals that fired (``SIGNALS``; at most 1.0), ``drivers`` those
signals with the values that fired them (largest weight first), ``type_signals`` descriptive patterns
(``broadcaster``, ``amplifier``, ``conversational``, ``high_volume``). Accounts under ``min_posts`` posts get no
score (too few posts for rhythms to mean anything) but their features.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar, NamedTuple

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from crawl_assets.enrich.activity import AccountActivity
from crawl_assets.enrich.base import STAMP_NAMES, CombineContext, Enricher, feature_document
from crawl_assets.enrich.columns import _iso

_TS = pa.timestamp("us", tz="UTC")
_TAG = re.compile(r"<[^>]{0,500}>")
AUTOMATION_CLIENT = re.compile(r"bot\b|\bapi\b|ifttt|dlvr\.it|buffer|zapier|hootsuite|botize|auto ?post|scheduler|"
                               r"twittbot|tweetdeck api|rss", re.IGNORECASE)
SNOWFLAKE_MIN = 1 << 40
SNOWFLAKE_EPOCH_MS = 1288834974657


class Signal(NamedTuple):
    name: str
    feature: str
    op: str  # ">=" or "<="
    threshold: float
    weight: float
    why: str


# The score's signals (docs/ENRICHMENT.md, *Account types*): weights sum to more than 1, the score is capped.
SIGNALS = (
    Signal("regular_gaps", "gap_cv", "<=", 0.3, 0.2, "gaps between posts nearly constant"),
    Signal("clockwork_intervals", "interval_regularity", ">=", 0.5, 0.15, "half the gaps within 10% of the median gap"),
    Signal("round_the_clock", "hour_entropy", ">=", 4.2, 0.1, "posts spread evenly over all 24 hours"),
    Signal("fast_posting", "gap_under_60s_share", ">=", 0.3, 0.15, "many posts less than a minute apart"),
    Signal("bursty", "burstiness", ">=", 0.5, 0.05, "posts come in bursts"),
    Signal("mostly_reposts", "repost_share", ">=", 0.8, 0.15, "mostly reposts or forwards"),
    Signal("repeated_texts", "self_duplicate_ratio", ">=", 0.3, 0.15, "posts the same text again"),
    Signal("shared_texts", "duplicate_text_ratio", ">=", 0.5, 0.1, "texts that other posts repeat"),
    Signal("high_volume", "posts_per_active_day", ">=", 50, 0.1, "many posts per active day"),
    Signal("automation_client", "automation_client", ">=", 1, 0.2, "the platform names a bot, API or scheduler"),
    Signal("new_account", "account_age_days", "<=", 30, 0.05, "account younger than a month at its first post"),
)
DRIVER = pa.struct([pa.field("signal", pa.string()), pa.field("feature", pa.string()), pa.field("value", pa.float64()),
                    pa.field("threshold", pa.string()), pa.field("weight", pa.float64()), pa.field("why", pa.string())])
FEATURES = ("posts", "posts_per_active_day", "hour_entropy", "gap_cv", "gap_under_60s_share", "burstiness",
            "interval_regularity", "repost_share", "reply_share", "duplicate_text_ratio", "self_duplicate_ratio",
            "client_share", "account_age_days")


def client_of(meta: Any) -> str | None:
    """The client the platform names for one record (``metadata`` as stored: JSON text), or None: X's ``source``
    (an HTML anchor or plain text), Telegram's ``via_bot`` / ``via_bot_id``."""
    if not meta:
        return None
    if isinstance(meta, (str, bytes)):
        text = meta if isinstance(meta, str) else meta.decode("utf-8", "replace")
        if '"source"' not in text and '"via_bot' not in text:
            return None
        try:
            meta = orjson.loads(meta)
        except orjson.JSONDecodeError:
            return None
    if not isinstance(meta, dict):
        return None
    if isinstance(meta.get("source"), str):
        return _TAG.sub("", meta["source"]).strip()[:100] or None
    for name in ("via_bot", "via_bot_id"):
        if meta.get(name) not in (None, ""):
            return f"via bot {str(meta[name])[:80]}"
    return None


def snowflake_platforms() -> frozenset[str]:
    """Platforms whose author ids are Snowflake ids (their source spec says so)."""
    from crawl_assets.core import catalog

    return frozenset(p for p in catalog.platforms() if catalog.spec(p).snowflake_author_ids)


def account_created_at(platform: str, author_id: str, snowflakes: frozenset[str]) -> datetime | None:
    """When an account was created, where its id says so (Snowflake ids of ``snowflakes`` platforms); else None."""
    if platform not in snowflakes or not author_id.isdigit():
        return None
    number = int(author_id)
    if number < SNOWFLAKE_MIN or number >= 1 << 63:
        return None
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=(number >> 22) + SNOWFLAKE_EPOCH_MS)


class AccountTypes(Enricher):
    name: ClassVar[str] = "account_types"
    version: ClassVar[str] = "1"
    scope: ClassVar[str] = "tenant"  # type: ignore[assignment]
    columns: ClassVar[tuple[str, ...]] = (*AccountActivity.columns, "metadata")
    tables: ClassVar[tuple[str, ...]] = ("accounts",)
    description: ClassVar[str] = ("Per account: posting regularity, entropy, burstiness, repost/reply/duplicate "
                                  "shares, client, account age, and a transparent score of automation signals "
                                  "(signals only, no verdicts).")

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {"min_posts": 5}

    def validate(self) -> None:
        if not (isinstance(self.params["min_posts"], int) and self.params["min_posts"] >= 2):
            raise ValueError("account_types: 'min_posts' must be an integer of at least 2")

    @property
    def _activity(self) -> AccountActivity:
        return AccountActivity()

    @property
    def part_schema(self) -> pa.Schema:
        fields = [f for f in self._activity.part_schema if f.name not in STAMP_NAMES]
        return self.stamped_schema([*fields, pa.field("client", pa.string())])

    def extract(self, records: pa.Table) -> pa.Table:
        rows = self._activity.extract(records)
        platforms = records.column("platform").to_pylist()
        metas = records.column("metadata").to_pylist() if "metadata" in records.column_names else [None] * len(platforms)
        clients = [client_of(m) for m in metas]
        data = {f.name: rows.column(f.name) for f in rows.schema if f.name not in STAMP_NAMES}
        return self.table(self.part_schema, {**data, "client": pa.array(clients, pa.string())})

    # -- per tenant -------------------------------------------------------------------------------------
    def combine(self, rows: Iterable[pa.Table], context: CombineContext) -> dict[str, pa.Table]:
        tables = [t for t in rows if t.num_rows]
        if not tables:
            return {"accounts": self.account_schema.empty_table()}
        activity = self._activity.combine(iter(t.drop_columns(["client"]) for t in tables), context)["accounts"]
        posts = pd.concat([t.select(["key", "platform", "author_id", "created_at", "client"]).to_pandas()
                           for t in tables], ignore_index=True).drop_duplicates("key", keep="last")
        posts = posts[posts["author_id"].notna() & posts["created_at"].notna()]
        extra = self._rhythm(posts)
        return {"accounts": self._accounts(activity, extra, context)}

    @staticmethod
    def _rhythm(posts: pd.DataFrame) -> pd.DataFrame:
        author = ["platform", "author_id"]
        posts = posts.sort_values([*author, "created_at", "key"], kind="stable")
        same = posts[author].eq(posts[author].shift()).all(axis=1)
        gap = posts["created_at"].diff().dt.total_seconds().where(same)
        posts = posts.assign(gap=gap)
        median = posts.groupby(author)["gap"].transform("median")
        near = ((posts["gap"] - median).abs() <= 0.1 * median.clip(lower=1)).where(posts["gap"].notna())
        posts = posts.assign(near=near.astype(float))
        out = posts.groupby(author, sort=True).agg(gap_mean=("gap", "mean"), gap_std=("gap", "std"),
                                                     near=("near", "mean"), gaps=("gap", "count"))
        clients = posts.dropna(subset=["client"]).groupby([*author, "client"]).size().rename("n").reset_index()
        clients = clients.sort_values([*author, "n", "client"], ascending=[True, True, False, True])
        top = clients.drop_duplicates(author).set_index(author)
        counts = posts.groupby(author)["key"].size()
        out["client"] = top["client"].reindex(out.index)
        out["client_share"] = (top["n"].reindex(out.index) / counts.reindex(out.index)).round(4)
        return out

    def _accounts(self, activity: pa.Table, extra: pd.DataFrame, ctx: CombineContext) -> pa.Table:
        cols: dict[str, list[Any]] = {f.name: [] for f in self.account_schema if f.name not in STAMP_NAMES}
        snowflakes = snowflake_platforms()
        for row in activity.to_pylist():
            idx = (row["platform"], row["author_id"])
            more = extra.loc[idx] if idx in extra.index else None
            features: dict[str, Any] = {name: row.get(name) for name in FEATURES if name in row}
            burst = None
            if more is not None and more["gaps"] >= 2 and pd.notna(more["gap_std"]) and \
                    (more["gap_std"] + more["gap_mean"]) > 0:
                burst = round(float((more["gap_std"] - more["gap_mean"]) / (more["gap_std"] + more["gap_mean"])), 4)
            regular = None if more is None or more["gaps"] < 2 or pd.isna(more["near"]) else round(float(more["near"]), 4)
            client = None if more is None or pd.isna(more["client"]) else str(more["client"])
            share = None if client is None else float(more["client_share"])
            created = account_created_at(row["platform"], row["author_id"], snowflakes)
            age = None if created is None else round((row["first_post"] - created).total_seconds() / 86400, 2)
            features.update(burstiness=burst, interval_regularity=regular, client_share=share, account_age_days=age,
                            automation_client=1.0 if client and AUTOMATION_CLIENT.search(client) else 0.0)
            scored = row["posts"] >= self.params["min_posts"]
            drivers = fired(features) if scored else []
            cols["tenant"].append(row["tenant"])
            cols["platform"].append(row["platform"])
            cols["author_id"].append(row["author_id"])
            cols["author_handle"].append(row["author_handle"])
            cols["posts"].append(row["posts"])
            cols["first_post"].append(row["first_post"])
            cols["last_post"].append(row["last_post"])
            cols["score"].append(round(min(1.0, sum(d["weight"] for d in drivers)), 4) if scored else None)
            cols["drivers"].append(drivers)
            cols["type_signals"].append(type_signals(features) if scored else [])
            cols["client"].append(client)
            cols["account_created_at"].append(created)
            cols["features"].append({k: (None if v is None else float(v)) for k, v in features.items()
                                     if k in FEATURES or k == "automation_client"})
            cols["generated_at"].append(ctx.generated_at)
        return self.table(self.account_schema, cols)

    @property
    def account_schema(self) -> pa.Schema:
        feature_struct = pa.struct([pa.field(n, pa.float64()) for n in (*FEATURES, "automation_client")])
        return self.stamped_schema([
            pa.field("tenant", pa.string()), pa.field("platform", pa.string()), pa.field("author_id", pa.string()),
            pa.field("author_handle", pa.string()), pa.field("posts", pa.int64()), pa.field("first_post", _TS),
            pa.field("last_post", _TS), pa.field("score", pa.float64()), pa.field("drivers", pa.list_(DRIVER)),
            pa.field("type_signals", pa.list_(pa.string())), pa.field("client", pa.string()),
            pa.field("account_created_at", _TS), pa.field("features", feature_struct),
            pa.field("generated_at", _TS)])

    def documents(self, table: str, rows: pa.Table, context: CombineContext | None) -> Iterator[dict[str, Any]]:
        assert context is not None
        for row in rows.to_pylist():
            info = {"score": row["score"], "drivers": row["drivers"], "type_signals": row["type_signals"],
                    "client": row["client"], "account_created_at": _iso(row["account_created_at"]),
                    "features": row["features"], "posts": row["posts"],
                    "note": "signals observed in collected posts, not a verdict about the account"}
            yield feature_document(self, f"{row['platform']}:{row['author_id']}", "account", tenant=row["tenant"],
                                   platform=row["platform"], author_id=row["author_id"],
                                   author_handle=row["author_handle"], created_at=_iso(row["first_post"]),
                                   updated_at=_iso(context.generated_at), account_types=info)


def fired(features: dict[str, Any]) -> list[dict[str, Any]]:
    """The signals ``features`` fire, largest weight first (a feature that is unknown fires nothing)."""
    out = []
    for s in SIGNALS:
        value = features.get(s.feature)
        if value is None or (isinstance(value, float) and np.isnan(value)):
            continue
        if (value >= s.threshold) if s.op == ">=" else (value <= s.threshold):
            out.append({"signal": s.name, "feature": s.feature, "value": float(value),
                        "threshold": f"{s.op} {s.threshold:g}", "weight": s.weight, "why": s.why})
    return sorted(out, key=lambda d: (-d["weight"], d["signal"]))


def type_signals(features: dict[str, Any]) -> list[str]:
    """Descriptive patterns of posting (not types of owner): broadcaster, amplifier, conversational, high_volume."""
    out = []
    reply, repost = features.get("reply_share") or 0.0, features.get("repost_share") or 0.0
    if reply < 0.05 and repost < 0.5:
        out.append("broadcaster")
    if repost >= 0.6:
        out.append("amplifier")
    if reply >= 0.5:
        out.append("conversational")
    if (features.get("posts_per_active_day") or 0) >= 50:
        out.append("high_volume")
    return out

