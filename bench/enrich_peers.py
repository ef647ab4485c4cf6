"""The peers ``bench/enrich.py`` runs beside each enricher: what a user would write without it (each named in
that script's docstring). One function per enricher, ``peer_<name>(records table) -> rows found``."""

from __future__ import annotations

def peer_near_duplicates(table) -> int:
    import zlib

    from datasketch import MinHash, MinHashLSH

    from crawl_assets.enrich.near_duplicates import shingles

    lsh, hashes = MinHashLSH(threshold=0.6, num_perm=64), {}
    for i, (kind, text) in enumerate(zip(table.column("kind").to_pylist(), table.column("text_clean").to_pylist())):
        grams = shingles(text or "") if kind != "repost" else []
        if sum(1 for g in grams if b" " not in g) < 6:
            continue
        m = MinHash(num_perm=64, seed=1, hashfunc=zlib.crc32)
        for g in grams:
            m.update(g)
        hashes[i] = m
        lsh.insert(i, m)
    parent = {i: i for i in hashes}

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, m in hashes.items():
        for j in lsh.query(m):
            if j != i and m.jaccard(hashes[j]) >= 0.6:
                parent[find(j)] = find(i)
    sizes: dict[int, int] = {}
    for i in hashes:
        sizes[find(i)] = sizes.get(find(i), 0) + 1
    return sum(1 for s in sizes.values() if s > 1)


def peer_trends(table) -> int:
    import numpy as np
    import pandas as pd
    from scipy.stats import poisson

    df = table.select(["key", "created_at", "hashtags", "text_clean"]).to_pandas()
    tags = df[["key", "created_at", "hashtags"]].explode("hashtags").dropna().rename(columns={"hashtags": "term"})
    words = df.assign(term=df["text_clean"].str.lower().str.split(r"[^\w\u200c]+", regex=True))
    words = words[["key", "created_at", "term"]].explode("term")
    words = words[words["term"].str.len() >= 3]
    terms = pd.concat([tags.assign(kind="hashtag"), words.assign(kind="term")])
    terms["window"] = terms["created_at"].dt.floor("24h")
    counts = terms.groupby(["kind", "term", "window"])["key"].nunique().unstack(fill_value=0)
    counts = counts[counts.max(axis=1) >= 5]
    baseline = counts.T.shift(1).rolling(7, min_periods=3).mean().T
    lam = np.maximum(baseline.to_numpy(), 0.5)
    values = counts.to_numpy()
    p = poisson.sf(values - 1, lam)
    hits = (values >= 5) & (values >= 2 * lam) & (p <= 0.001) & ~np.isnan(baseline.to_numpy())
    return int(hits.sum())


def peer_account_activity(table) -> int:
    import numpy as np
    import pandas as pd

    df = table.select(["key", "author_id", "created_at", "kind", "lang", "text_clean"]).to_pandas()

    def features(g: pd.DataFrame) -> pd.Series:
        t = g["created_at"].sort_values()
        gaps = t.diff().dt.total_seconds().dropna()
        hours = t.dt.hour.value_counts(normalize=True).reindex(range(24), fill_value=0).to_numpy()
        nz = hours[hours > 0]
        own = g.loc[g["kind"] != "repost", "text_clean"]
        return pd.Series({
            "posts": len(g), "active_days": t.dt.date.nunique(),
            "posts_per_day": len(g) / max(1.0, (t.iloc[-1] - t.iloc[0]).total_seconds() / 86400),
            "hour_entropy": float(-(nz * np.log2(nz)).sum()), "gap_median_s": gaps.median(),
            "gap_cv": gaps.std() / gaps.mean() if len(gaps) > 1 else np.nan,
            "repost_share": (g["kind"] == "repost").mean(), "reply_share": (g["kind"] == "reply").mean(),
            "self_duplicate_ratio": own.duplicated(keep=False).mean() if len(own) else np.nan,
            "languages": g["lang"].value_counts().to_dict()})

    return len(df.groupby("author_id").apply(features, include_groups=False))


def peer_places(table) -> int:
    """What one writes first: one regular expression of every gazetteer name (the same folded names),
    longest first, no disambiguation; records with a match."""
    import re

    from crawl_assets.enrich.gazetteer import fold, load

    names = sorted(load().aliases, key=len, reverse=True)
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, names)) + r")(?!\w)")
    return sum(1 for t in table.column("text_clean").to_pylist() if t and pattern.search(fold(t)))


def peer_coordination(table) -> int:
    """CooRnet's co-sharing as its R code does it, in pandas: URL shares self-joined on the URL, pairs of
    different accounts within 60 s, kept when they co-shared at least 3 URLs; the linked pairs."""
    import pandas as pd

    df = table.select(["author_id", "created_at", "urls"]).to_pandas().explode("urls").dropna(subset=["urls"])
    df = df.assign(t=df["created_at"].astype("int64") // 10**9)[["author_id", "urls", "t"]]
    pairs = df.merge(df, on="urls")
    pairs = pairs[(pairs["author_id_x"] < pairs["author_id_y"]) & ((pairs["t_x"] - pairs["t_y"]).abs() <= 60)]
    counts = pairs.groupby(["author_id_x", "author_id_y"])["urls"].nunique()
    return int((counts >= 3).sum())


def peer_account_types(table) -> int:
    """The account_activity peer (pandas ``groupby.apply``) is the floor: the same per-author features."""
    return peer_account_activity(table)


def peer_classifier(table) -> int:
    import skops.io as sio

    from crawl_assets.enrich.classifier import BASELINE

    from crawl_assets.enrich.classifier import BASELINE_TRUSTED

    model = sio.load(BASELINE, trusted=BASELINE_TRUSTED)
    texts = [t for t in table.column("text_clean").to_pylist() if t and t.strip()]
    return len(model.predict_proba(texts))


def peer_topics(table) -> int:
    from sklearn.decomposition import NMF
    from sklearn.feature_extraction.text import TfidfVectorizer

    from crawl_assets.enrich.topics import Topics

    p = Topics.defaults()
    texts = [t or "" for t in table.column("text_clean").to_pylist()]
    x = TfidfVectorizer(min_df=p["min_df"], max_df=p["max_df"], max_features=p["max_terms"],
                        sublinear_tf=True).fit_transform(texts)
    w = NMF(n_components=p["topics"], init="nndsvda", solver="cd", max_iter=p["max_iter"],
            random_state=p["seed"]).fit_transform(x)
    return int((w.sum(axis=1) > 0).sum())  # records given a topic


def peer_entities(table) -> int:
    import re

    from crawl_assets.enrich.entity_rules import gazetteer

    names = sorted({e.name for e in gazetteer().values()}, key=len, reverse=True)
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")
    return sum(1 for t in table.column("text_clean").to_pylist() if t and pattern.search(t))
