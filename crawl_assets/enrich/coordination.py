"""Coordination signals: the coordinated-sharing method (as in CooRnet, Giglietto et al.) over a tenant's records.
Two accounts *co-share* an item when both share it within ``window_seconds`` of each other; an item is a URL
(normalized), a hashtag, a reposted record, or a near-duplicate text (a MinHash cluster, as ``near_duplicates``
finds them). A pair of accounts is linked when they co-shared at least ``min_repetitions`` distinct items, and
those items are at least ``min_share`` of the items the less active of the two shared (two prolific accounts
meet by chance; a coordinated pair meets on most of what it posts). Groups are the connected components of
the links with at least ``min_accounts`` accounts.

Crowds are no evidence: where more than ``max_burst`` shares of one item fall in one window (a trending hashtag,
a viral link), that window makes no pairs; it is counted, not linked.

**Caution.** Co-occurrence is not proof of coordination. Accounts of one newsroom, fans reacting to a live event,
a scheduled cross-posting tool or people following the same feed all co-share quickly and repeatedly. A group is
where to look, never a verdict; its rows say which items, when and how often, so that it can be judged.

Per record (``extract``): context, normalized URLs, hashtags, the reposted key and the text's MinHash signature.
Per tenant (``combine``): ``groups`` (accounts by their platform ids, sizes, items, first and last co-share) and
``edges`` (account pairs with their co-shared item count).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.enrich.base import STAMP_NAMES, CombineContext, Enricher, feature_document
from crawl_assets.enrich.columns import CONTEXT_COLUMNS, CONTEXT_FIELDS, _iso, context
from crawl_assets.enrich.near_duplicates import NearDuplicates
from crawl_assets.enrich.signatures import compact_rows, latest_signatures

_TS = pa.timestamp("us", tz="UTC")
KINDS = ("url", "hashtag", "repost", "text")
CAUTION = ("Co-occurrence is not proof of coordination: accounts of one newsroom, people reacting to one event or "
           "a cross-posting tool co-share quickly and repeatedly too. A group is where to look, never a verdict.")
_TRACKING = re.compile(r"^(utm_|fbclid$|gclid$|igshid$|mc_|ref$|ref_src$|s$|si$)")
ITEMS_LISTED = 20  # items named per group or edge (the count is complete)
_COMBINED = ("key", "platform", "author_id", "created_at", "author_handle", "urls", "hashtags", "repost_of")


def normalize_url(url: str) -> str | None:
    """A URL as an item: scheme and host lowercased, ``www.`` and the fragment dropped, tracking parameters
    (utm_*, fbclid, ...) removed, the remaining ones sorted, a trailing slash dropped."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.lower().removeprefix("www.")
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                             if not _TRACKING.match(k.lower())))
    return urlunsplit(("https", host, parts.path.rstrip("/"), query, ""))


class Coordination(Enricher):
    name: ClassVar[str] = "coordination"
    version: ClassVar[str] = "1"
    scope: ClassVar[str] = "tenant"  # type: ignore[assignment]
    columns: ClassVar[tuple[str, ...]] = (*CONTEXT_COLUMNS, "kind", "text_clean", "urls", "hashtags", "repost_of")
    tables: ClassVar[tuple[str, ...]] = ("groups", "edges")
    description: ClassVar[str] = ("Co-sharing network: accounts sharing the same URL, hashtag, repost or "
                                  "near-duplicate text within a short window, repeatedly; groups of linked "
                                  "accounts. Co-occurrence is not proof of coordination.")

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {"window_seconds": 60, "min_repetitions": 3, "min_share": 0.2, "min_accounts": 2, "max_burst": 50,
                "kinds": list(KINDS), "num_perm": 64, "threshold": 0.6, "min_words": 6, "seed": 1}

    def validate(self) -> None:
        p = self.params
        checks = (("window_seconds", 1, 86_400), ("min_repetitions", 1, 10_000), ("min_accounts", 2, 100_000),
                  ("max_burst", 2, 10_000))
        for name, lo, hi in checks:
            if not (isinstance(p[name], int) and lo <= p[name] <= hi):
                raise ValueError(f"coordination: {name!r} must be an integer from {lo} to {hi}")
        if not (isinstance(p["min_share"], (int, float)) and 0 <= p["min_share"] <= 1):
            raise ValueError("coordination: 'min_share' must be a number from 0 to 1")
        if not (isinstance(p["kinds"], list) and p["kinds"] and set(p["kinds"]) <= set(KINDS)):
            raise ValueError(f"coordination: 'kinds' must be a non-empty subset of {', '.join(KINDS)}")
        self._texts.validate()

    @property
    def _texts(self) -> NearDuplicates:
        p = self.params
        return NearDuplicates(num_perm=p["num_perm"], threshold=p["threshold"], min_words=p["min_words"], seed=p["seed"])

    @property
    def part_schema(self) -> pa.Schema:
        strings = pa.list_(pa.string())
        return self.stamped_schema([*CONTEXT_FIELDS, pa.field("author_handle", pa.string()),
                                    pa.field("urls", strings), pa.field("hashtags", strings),
                                    pa.field("repost_of", pa.string()),
                                    pa.field("signature", pa.list_(pa.uint32(), self.params["num_perm"]))])

    def extract(self, records: pa.Table) -> pa.Table:
        wanted = set(self.params["kinds"])
        n = records.num_rows
        urls = [[u for u in dict.fromkeys(filter(None, map(normalize_url, row or [])))] if "url" in wanted else []
                for row in records.column("urls").to_pylist()]
        tags = records.column("hashtags") if "hashtag" in wanted else pa.array([[]] * n, pa.list_(pa.string()))
        reposts = records.column("repost_of") if "repost" in wanted else pa.nulls(n, pa.string())
        if "text" in wanted:
            signature = self._texts.extract(records).column("signature")
        else:
            signature = pa.nulls(n, pa.list_(pa.uint32(), self.params["num_perm"]))
        handles = records.column("author_handle") if "author_handle" in records.column_names else pa.nulls(n, pa.string())
        return self.table(self.part_schema, {**context(records), "author_handle": handles,
                                             "urls": pa.array(urls, pa.list_(pa.string())), "hashtags": tags,
                                             "repost_of": reposts, "signature": signature})

    # -- per tenant -------------------------------------------------------------------------------------
    def combine(self, rows: Iterable[pa.Table], context: CombineContext) -> dict[str, pa.Table]:
        table, sigs, signed = latest_signatures(rows, self.params["num_perm"], list(_COMBINED))
        ok = np.asarray(pc.and_(pc.is_valid(table.column("author_id")), pc.is_valid(table.column("created_at")))
                        .to_numpy(zero_copy_only=False), bool)
        if not ok.any():
            return self._empty()
        if not ok.all():
            table = table.filter(pa.array(ok))
            sigs = compact_rows(sigs, np.flatnonzero(ok[signed]))
            signed = (np.cumsum(ok) - 1)[signed[ok[signed]]]
        events = self._events(table, sigs, signed)
        if events is None:
            return self._empty()
        return self._network(events, table, context)

    def _events(self, table: pa.Table, sigs: np.ndarray, signed: np.ndarray) -> pd.DataFrame | None:
        """One row per (record, item): record row, account code, item code (items numbered in the order of
        their labels, ``kind:value``), time in seconds. Labels stay in Arrow: no Python string per share."""
        accounts = pc.binary_join_element_wise(table.column("platform"), table.column("author_id"), ":")
        acct = pc.dictionary_encode(accounts.combine_chunks())
        codes = acct.indices.to_numpy()
        seconds = pc.cast(table.column("created_at"), pa.int64()).to_numpy() // 1_000_000
        rows, labels = [], []
        for kind, column in (("url", "urls"), ("hashtag", "hashtags")):
            lists = table.column(column).combine_chunks()
            values = pc.list_flatten(lists)
            present = pc.is_valid(values)
            rows.append(pc.list_parent_indices(lists).filter(present).to_numpy().astype(np.int64))
            labels.append(_labelled(kind, values.filter(present)))
        repost = table.column("repost_of").combine_chunks()
        shared = np.asarray(pc.fill_null(pc.greater(pc.utf8_length(repost), 0), False).to_numpy(zero_copy_only=False), bool)
        rows.append(np.flatnonzero(shared))
        labels.append(_labelled("repost", repost.filter(pa.array(shared))))
        if "text" in self.params["kinds"]:
            text_rows, text_labels = self._text_items(table, sigs, signed)
            rows.append(text_rows)
            labels.append(text_labels)
        row = np.concatenate(rows)
        if not len(row):
            return None
        encoded = pc.dictionary_encode(pa.concat_arrays(labels))
        rank = np.empty(len(encoded.dictionary), np.int64)
        by_label = pc.array_sort_indices(encoded.dictionary).to_numpy()
        rank[by_label] = np.arange(len(by_label))
        events = pd.DataFrame({"row": row, "item_code": rank[encoded.indices.to_numpy()]})
        events["account"] = codes[row]
        events["t"] = seconds[row]
        events = events.drop_duplicates(["account", "item_code", "t"])
        self._account_names = acct.dictionary.to_pylist()
        self._account_codes = codes
        self._item_names = encoded.dictionary.take(pa.array(by_label))
        return events

    def _text_items(self, table: pa.Table, sigs: np.ndarray, signed: np.ndarray) -> tuple[np.ndarray, pa.Array]:
        """Rows of the near-duplicate clusters and their labels (``text:`` and a hash of the first key)."""
        if len(signed) < 2:
            return np.zeros(0, np.int64), pa.array([], pa.string())
        groups = self._texts._cluster(sigs)
        firsts = table.column("key").take(pa.array([int(signed[g[0]]) for g in groups], pa.int64())).to_pylist()
        names = ["text:" + hashlib.blake2b(k.encode(), digest_size=8).hexdigest() for k in firsts]
        which = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
        rows = signed[np.fromiter(itertools.chain.from_iterable(groups), np.int64)]
        return rows, pa.array(names, pa.string()).take(pa.array(which, pa.int64()))

    def _network(self, events: pd.DataFrame, table: pa.Table, ctx: CombineContext) -> dict[str, pa.Table]:
        p = self.params
        item_names = self._item_names
        events = events.sort_values(["item_code", "t", "account"], kind="stable")
        item, t, account = (events[c].to_numpy(np.int64) for c in ("item_code", "t", "account"))
        shared = pd.DataFrame({"account": account, "item": item}).drop_duplicates().groupby("account").size()
        pairs = co_shares(item, t, account, p["window_seconds"], p["max_burst"])
        if not len(pairs["a"]):
            return self._empty()
        link = pd.DataFrame(pairs).drop_duplicates(["a", "b", "item"])
        edges = link.groupby(["a", "b"]).agg(weight=("item", "size"), first=("t", "min"), last=("t", "max"))
        edges = edges.reset_index()
        fewer = np.minimum(shared.reindex(edges["a"]).to_numpy(), shared.reindex(edges["b"]).to_numpy())
        edges = edges[(edges["weight"] >= p["min_repetitions"]) & (edges["weight"] / fewer >= p["min_share"])]
        if edges.empty:
            return self._empty()
        labels = _components(edges["a"].to_numpy(), edges["b"].to_numpy())
        edges = edges.assign(component=[labels[a] for a in edges["a"]])
        sizes = pd.concat([edges[["component", "a"]].rename(columns={"a": "n"}),
                           edges[["component", "b"]].rename(columns={"b": "n"})]).drop_duplicates()
        big = sizes.groupby("component").size()
        edges = edges[edges["component"].isin(big[big >= p["min_accounts"]].index)]
        if edges.empty:
            return self._empty()
        link = link.merge(edges[["a", "b", "component"]], on=["a", "b"])
        return self._tables(edges, link, item_names, table, ctx)

    def _tables(self, edges: pd.DataFrame, link: pd.DataFrame, item_names: Any, table: pa.Table,
                ctx: CombineContext) -> dict[str, pa.Table]:
        names = self._account_names
        handles = _handles(table, self._account_codes, names, np.r_[edges["a"].to_numpy(), edges["b"].to_numpy()])
        p = self.params
        group_cols: dict[str, list[Any]] = {f.name: [] for f in self.group_schema if f.name not in STAMP_NAMES}
        edge_cols: dict[str, list[Any]] = {f.name: [] for f in self.edge_schema if f.name not in STAMP_NAMES}
        group_of: dict[int, str] = {}
        for component, part in sorted(edges.groupby("component"), key=lambda kv: min(names[a] for a in kv[1]["a"])):
            members = sorted({names[a] for a in part["a"]} | {names[b] for b in part["b"]})
            gid = "cg-" + hashlib.blake2b("\0".join(members).encode(), digest_size=8).hexdigest()
            group_of[component] = gid
            items = link[link["component"] == component]
            counts = items.groupby("item").size().sort_values(ascending=False, kind="stable")
            listed = _names(item_names, counts.index[:ITEMS_LISTED])
            kinds = sorted({name.split(":", 1)[0] for name in _names(item_names, counts.index)})
            for name, value in (
                    ("group_id", gid), ("tenant", ctx.tenant), ("accounts", [m.split(":", 1)[1] for m in members]),
                    ("account_keys", members), ("handles", [handles.get(m) for m in members]),
                    ("platforms", sorted({m.split(":", 1)[0] for m in members})), ("account_count", len(members)),
                    ("edge_count", len(part)), ("items", int(len(counts))), ("co_shares", int(part["weight"].sum())),
                    ("kinds", kinds), ("top_items", listed), ("first_at", _dt(int(items["t"].min()))),
                    ("last_at", _dt(int(items["t"].max()))), ("window_seconds", p["window_seconds"]),
                    ("min_repetitions", p["min_repetitions"]), ("caution", CAUTION), ("generated_at", ctx.generated_at)):
                group_cols[name].append(value)
        for row in edges.sort_values(["component", "a", "b"]).itertuples():
            pair = link[(link["a"] == row.a) & (link["b"] == row.b)]
            a, b = sorted((names[row.a], names[row.b]))
            listed = _names(item_names, pair["item"].drop_duplicates().to_numpy()[:ITEMS_LISTED])
            for name, value in (("group_id", group_of[row.component]), ("tenant", ctx.tenant), ("source", a),
                                ("target", b), ("source_handle", handles.get(a)), ("target_handle", handles.get(b)),
                                ("weight", int(row.weight)), ("top_items", listed),
                                ("kinds", sorted({i.split(":", 1)[0] for i in listed})),
                                ("first_at", _dt(int(row.first))), ("last_at", _dt(int(row.last))),
                                ("generated_at", ctx.generated_at)):
                edge_cols[name].append(value)
        return {"groups": self.table(self.group_schema, group_cols), "edges": self.table(self.edge_schema, edge_cols)}

    def _empty(self) -> dict[str, pa.Table]:
        return {"groups": self.group_schema.empty_table(), "edges": self.edge_schema.empty_table()}

    @property
    def group_schema(self) -> pa.Schema:
        strings = pa.list_(pa.string())
        return self.stamped_schema([
            pa.field("group_id", pa.string()), pa.field("tenant", pa.string()), pa.field("accounts", strings),
            pa.field("account_keys", strings), pa.field("handles", strings), pa.field("platforms", strings),
            pa.field("account_count", pa.int32()), pa.field("edge_count", pa.int32()), pa.field("items", pa.int32()),
            pa.field("co_shares", pa.int32()), pa.field("kinds", strings), pa.field("top_items", strings),
            pa.field("first_at", _TS), pa.field("last_at", _TS), pa.field("window_seconds", pa.int32()),
            pa.field("min_repetitions", pa.int32()), pa.field("caution", pa.string()), pa.field("generated_at", _TS)])

    @property
    def edge_schema(self) -> pa.Schema:
        strings = pa.list_(pa.string())
        return self.stamped_schema([
            pa.field("group_id", pa.string()), pa.field("tenant", pa.string()), pa.field("source", pa.string()),
            pa.field("target", pa.string()), pa.field("source_handle", pa.string()),
            pa.field("target_handle", pa.string()), pa.field("weight", pa.int32()), pa.field("top_items", strings),
            pa.field("kinds", strings), pa.field("first_at", _TS), pa.field("last_at", _TS),
            pa.field("generated_at", _TS)])

    # -- index ------------------------------------------------------------------------------------------
    def documents(self, table: str, rows: pa.Table, context: CombineContext | None) -> Iterator[dict[str, Any]]:
        assert context is not None
        updated = _iso(context.generated_at)
        for row in rows.to_pylist():
            info = {k: v for k, v in row.items() if k not in STAMP_NAMES and k not in ("tenant", "generated_at")}
            info.update(first_at=_iso(row["first_at"]), last_at=_iso(row["last_at"]))
            if table == "groups":
                yield feature_document(self, f"group:{row['group_id']}", "coordination_group", tenant=context.tenant,
                                       created_at=_iso(row["first_at"]), updated_at=updated, coordination=info)
            else:
                yield feature_document(self, f"edge:{row['source']}:{row['target']}", "coordination_edge",
                                       tenant=context.tenant, created_at=_iso(row["first_at"]), updated_at=updated,
                                       coordination=info)


def co_shares(item: np.ndarray, t: np.ndarray, account: np.ndarray, window: int,
              max_burst: int) -> dict[str, np.ndarray]:
    """Pairs of different accounts sharing one item within ``window`` seconds (events sorted by item, time):
    ``a < b`` account codes, the item and the earlier share's time. A share whose window holds more than
    ``max_burst`` shares of its item makes no pairs (a crowd)."""
    key = item * (1 << 34) + (t - t.min() if len(t) else t)
    end = np.searchsorted(key, key + window, side="right")
    ahead = end - np.arange(len(key)) - 1
    crowd_start = np.searchsorted(key, key - window, side="left")
    crowded = (ahead > max_burst) | ((np.arange(len(key)) - crowd_start) > max_burst)
    out: dict[str, list[np.ndarray]] = {"a": [], "b": [], "item": [], "t": []}
    for d in range(1, max_burst + 1):
        i = np.flatnonzero((ahead >= d) & ~crowded)
        if not len(i):
            break
        j = i + d
        j = j[~crowded[j]]
        i = j - d
        differ = account[i] != account[j]
        i, j = i[differ], j[differ]
        out["a"].append(np.minimum(account[i], account[j]))
        out["b"].append(np.maximum(account[i], account[j]))
        out["item"].append(item[i])
        out["t"].append(t[i])
    return {k: np.concatenate(v) if v else np.empty(0, np.int64) for k, v in out.items()}


def _components(a: np.ndarray, b: np.ndarray) -> dict[int, int]:
    """Connected component label of each account code in the links (a, b)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    nodes, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
    n = len(nodes)
    graph = coo_matrix((np.ones(len(a), np.int8), (inverse[:len(a)], inverse[len(a):])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    return dict(zip(nodes.tolist(), labels.tolist()))


def _handles(table: pa.Table, codes: np.ndarray, names: list[str], wanted: np.ndarray) -> dict[str, str]:
    """The handle of each ``wanted`` account (code), from its last row that names one."""
    handles = table.column("author_handle")
    named = np.asarray(pc.fill_null(pc.greater(pc.utf8_length(handles), 0), False).to_numpy(zero_copy_only=False), bool)
    rows = np.flatnonzero(named & np.isin(codes, wanted))[::-1]
    _, last = np.unique(codes[rows], return_index=True)
    rows = np.sort(rows[last])
    values = handles.take(pa.array(rows, pa.int64())).to_pylist()
    return {names[c]: h for c, h in zip(codes[rows].tolist(), values)}


def _names(labels: pa.Array, codes: Any) -> list[str]:
    """The labels of item ``codes``, in their order."""
    return labels.take(pa.array(np.asarray(codes, np.int64))).to_pylist()


def _labelled(kind: str, values: pa.Array) -> pa.Array:
    """``kind:value`` of each value, as Arrow strings."""
    return pc.binary_join_element_wise(pa.scalar(kind), pc.cast(values, pa.string()), ":")


def _dt(seconds: int) -> Any:
    return pd.Timestamp(seconds, unit="s", tz="UTC").to_pydatetime()
