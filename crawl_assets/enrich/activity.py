"""Account activity features: per author, from observed records only, the numbers account-type or bot research
starts from. Inferred (computed), never a verdict: no score says "bot".

Per record (``extract``): who posted, when, what kind (post, reply, repost, quote), in which language, and
a hash of the normalized text (reposts and empty texts have none). Per tenant (``combine``), for each
``(platform, author_id)`` over the latest observation of each record:

* ``posts``, ``first_post``, ``last_post``, ``active_days`` (distinct UTC dates with a post);
* ``posts_per_day`` = posts / max(1, days from first to last post); ``posts_per_active_day``;
* ``hour_profile``: the share of posts in each UTC hour 0-23; ``hour_entropy``: its Shannon entropy in bits
  (0 = every post in one hour, 4.58 = evenly spread);
* regularity of the gaps between consecutive posts: ``gap_median_s``, ``gap_cv`` (standard deviation / mean:
  ~0 clockwork, ~1 random arrivals, >1 bursts) and ``gap_under_60s_share``; null with fewer than 3 posts;
* ``repost_share``, ``reply_share``, ``quote_share``;
* ``duplicate_text_ratio``: the share of the author's own texts that occur more than once in the tenant
  (anyone's), ``self_duplicate_ratio``: that occur more than once among the author's own posts;
* ``languages``: posts per detected language.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.enrich.base import STAMP_NAMES, CombineContext, Enricher, feature_document
from crawl_assets.enrich.columns import CONTEXT_COLUMNS, CONTEXT_FIELDS, _iso, context

_TS = pa.timestamp("us", tz="UTC")
LANGUAGE = pa.struct([pa.field("lang", pa.string()), pa.field("posts", pa.int32())])


def _text_hashes(texts: pa.ChunkedArray | pa.Array, keep: np.ndarray) -> pa.Array:
    """A stable 64-bit hash of each text where ``keep`` (pandas' SipHash with its fixed key), else 0 (no own
    text: a repost or an empty text; 0 rather than null, which pandas would turn into an inexact float)."""
    values = pd.util.hash_array(np.asarray(pc.fill_null(texts, "").to_numpy(zero_copy_only=False), dtype=object))
    return pa.array(np.where(keep, values, np.uint64(0)), pa.uint64())


class AccountActivity(Enricher):
    name: ClassVar[str] = "account_activity"
    version: ClassVar[str] = "1"
    scope: ClassVar[str] = "tenant"  # type: ignore[assignment]
    columns: ClassVar[tuple[str, ...]] = (*CONTEXT_COLUMNS, "author_handle", "kind", "lang", "reply_to",
                                          "quote_of", "repost_of", "text_clean")
    tables: ClassVar[tuple[str, ...]] = ("accounts",)
    description: ClassVar[str] = "Per author: posting rate, hour-of-day profile, regularity, repost/reply " \
                                 "shares, duplicate-text ratio, languages (observed data only; no verdicts)."

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {"min_posts": 1}

    def validate(self) -> None:
        if not (isinstance(self.params["min_posts"], int) and self.params["min_posts"] >= 1):
            raise ValueError("account_activity: 'min_posts' must be a positive integer")

    @property
    def part_schema(self) -> pa.Schema:
        return self.stamped_schema([*CONTEXT_FIELDS, pa.field("author_handle", pa.string()),
                                    pa.field("kind", pa.string()), pa.field("lang", pa.string()),
                                    pa.field("is_reply", pa.bool_()), pa.field("is_repost", pa.bool_()),
                                    pa.field("is_quote", pa.bool_()), pa.field("text_hash", pa.uint64())])

    def extract(self, records: pa.Table) -> pa.Table:
        kind = records.column("kind")
        is_repost = pc.or_kleene(pc.equal(kind, "repost"), pc.is_valid(records.column("repost_of")))
        is_reply = pc.or_kleene(pc.equal(kind, "reply"), pc.is_valid(records.column("reply_to")))
        is_quote = pc.or_kleene(pc.equal(kind, "quote"), pc.is_valid(records.column("quote_of")))
        text = records.column("text_clean")
        keep = pc.and_(pc.invert(pc.fill_null(is_repost, False)),
                       pc.greater(pc.utf8_length(pc.fill_null(text, "")), 0)).to_numpy(zero_copy_only=False)
        return self.table(self.part_schema, {
            **context(records), "author_handle": records.column("author_handle"), "kind": kind,
            "lang": records.column("lang"), "is_reply": pc.fill_null(is_reply, False),
            "is_repost": pc.fill_null(is_repost, False), "is_quote": pc.fill_null(is_quote, False),
            "text_hash": _text_hashes(text, keep)})

    def combine(self, rows: Iterable[pa.Table], context: CombineContext) -> dict[str, pa.Table]:
        frames = [t.drop_columns([c for c in STAMP_NAMES if c in t.column_names]).to_pandas() for t in rows]
        frames = [f for f in frames if len(f)]
        if not frames:
            return {"accounts": self.account_schema.empty_table()}
        posts = pd.concat(frames, ignore_index=True).drop_duplicates("key", keep="last")
        own = posts["text_hash"].ne(0)
        posts = posts.assign(own=own, dup_anywhere=posts["text_hash"].map(posts["text_hash"].value_counts()).gt(1) & own)
        posts = posts[posts["author_id"].notna() & posts["created_at"].notna()]
        return {"accounts": self._accounts(posts, context)}

    def _accounts(self, posts: pd.DataFrame, ctx: CombineContext) -> pa.Table:
        author = ["platform", "author_id"]
        posts = posts.sort_values([*author, "created_at", "key"], kind="stable")
        created = posts["created_at"]
        same = posts[author].eq(posts[author].shift()).all(axis=1)
        gap = created.diff().dt.total_seconds().where(same)
        posts = posts.assign(gap=gap, gap_fast=(gap < 60).where(gap.notna()), hour=created.dt.hour,
                             day=created.dt.floor("D"),
                             self_dup=posts.duplicated([*author, "text_hash"], keep=False) & posts["own"])
        out = posts.groupby(author, sort=True).agg(
            posts=("key", "size"), first_post=("created_at", "min"), last_post=("created_at", "max"),
            active_days=("day", "nunique"), tenant=("tenant", "first"), handle=("author_handle", "last"),
            repost=("is_repost", "mean"), reply=("is_reply", "mean"), quote=("is_quote", "mean"),
            own=("own", "sum"), dup=("dup_anywhere", "sum"), self_dup=("self_dup", "sum"),
            gap_median=("gap", "median"), gap_mean=("gap", "mean"), gap_std=("gap", "std"),
            gap_fast=("gap_fast", "mean"))
        out = out[out["posts"] >= self.params["min_posts"]]
        hours = pd.crosstab([posts["platform"], posts["author_id"]], posts["hour"]).reindex(
            columns=range(24), fill_value=0).reindex(out.index, fill_value=0)
        shares = hours.to_numpy(dtype=float) / out["posts"].to_numpy(dtype=float)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            entropy = -np.where(shares > 0, shares * np.log2(shares), 0.0).sum(axis=1) + 0.0
        languages: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for (platform, author_id, lang), n in posts.groupby([*author, "lang"], dropna=False).size().items():
            languages.setdefault((platform, author_id), []).append({"lang": None if pd.isna(lang) else lang,
                                                                    "posts": int(n)})
        span_days = (out["last_post"] - out["first_post"]).dt.total_seconds() / 86400
        few = out["posts"] < 3
        cols = {
            "tenant": out["tenant"].tolist(), "platform": out.index.get_level_values(0).tolist(),
            "author_id": out.index.get_level_values(1).tolist(), "author_handle": _nulls(out["handle"], float_=False),
            "posts": out["posts"].tolist(), "first_post": out["first_post"].tolist(),
            "last_post": out["last_post"].tolist(), "active_days": out["active_days"].tolist(),
            "posts_per_day": (out["posts"] / span_days.clip(lower=1)).round(4).tolist(),
            "posts_per_active_day": (out["posts"] / out["active_days"]).round(4).tolist(),
            "hour_profile": np.round(shares, 4).tolist(), "hour_entropy": np.round(entropy, 4).tolist(),
            "gap_median_s": _nulls(out["gap_median"].mask(few)),
            "gap_cv": _nulls((out["gap_std"] / out["gap_mean"]).mask(few).round(4)),
            "gap_under_60s_share": _nulls(out["gap_fast"].astype(float).mask(few).round(4)),
            "repost_share": out["repost"].round(4).tolist(), "reply_share": out["reply"].round(4).tolist(),
            "quote_share": out["quote"].round(4).tolist(),
            "duplicate_text_ratio": _nulls((out["dup"] / out["own"]).round(4)),
            "self_duplicate_ratio": _nulls((out["self_dup"] / out["own"]).round(4)),
            "languages": [sorted(languages.get(idx, []), key=lambda d: (-d["posts"], d["lang"] or ""))
                          for idx in out.index],
            "generated_at": [ctx.generated_at] * len(out),
        }
        return self.table(self.account_schema, cols)

    @property
    def account_schema(self) -> pa.Schema:
        f64 = pa.float64()
        return self.stamped_schema([
            pa.field("tenant", pa.string()), pa.field("platform", pa.string()), pa.field("author_id", pa.string()),
            pa.field("author_handle", pa.string()), pa.field("posts", pa.int64()), pa.field("first_post", _TS),
            pa.field("last_post", _TS), pa.field("active_days", pa.int64()), pa.field("posts_per_day", f64),
            pa.field("posts_per_active_day", f64), pa.field("hour_profile", pa.list_(f64, 24)),
            pa.field("hour_entropy", f64), pa.field("gap_median_s", f64), pa.field("gap_cv", f64),
            pa.field("gap_under_60s_share", f64), pa.field("repost_share", f64), pa.field("reply_share", f64),
            pa.field("quote_share", f64), pa.field("duplicate_text_ratio", f64),
            pa.field("self_duplicate_ratio", f64), pa.field("languages", pa.list_(LANGUAGE)),
            pa.field("generated_at", _TS)])

    def documents(self, table: str, rows: pa.Table, context: CombineContext | None) -> Iterator[dict[str, Any]]:
        assert context is not None
        for row in rows.to_pylist():
            features = {k: v for k, v in row.items() if k not in STAMP_NAMES and k not in (
                "tenant", "platform", "author_id", "author_handle", "generated_at", "languages")}
            features.update(first_post=_iso(row["first_post"]), last_post=_iso(row["last_post"]),
                            languages={lang["lang"] or "und": lang["posts"] for lang in row["languages"]})
            yield feature_document(self, f"{row['platform']}:{row['author_id']}", "account", tenant=row["tenant"],
                                   platform=row["platform"], author_id=row["author_id"],
                                   author_handle=row["author_handle"], created_at=_iso(row["first_post"]),
                                   updated_at=_iso(context.generated_at), account_activity=features)


def _nulls(series: pd.Series, float_: bool = True) -> list[Any]:
    """Values with NaN/NA as None (pandas uses NaN for a mean or ratio over nothing)."""
    return [None if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) else (float(v) if float_ else v)
            for v in series.tolist()]
