"""Near-duplicate clusters: a planted text repeated and lightly edited by several accounts on two platforms
is one cluster with exactly those members; unrelated texts, reposts and short texts are in none."""

from __future__ import annotations

import random

import pyarrow.compute as pc
from datetime import datetime, timedelta, timezone

from crawl_assets.enrich.base import CombineContext
from crawl_assets.enrich.near_duplicates import NearDuplicates, shingles
from crawl_assets_tests.enrich.records import T0, record, table

NOW = CombineContext("acme", datetime(2026, 4, 1, tzinfo=timezone.utc))
CAMPAIGN = "The new metro line in Tehran opens next week and officials say the fare will be lower than buses"
EDITS = [
    CAMPAIGN,
    "The new metro line in Tehran opens next week! Officials said the fare will be lower than buses",
    "the new metro line in tehran opens next week and officials say the fare will be lower than the buses",
    CAMPAIGN + " https://example.org/a?utm=1 @someone",
]
PERSIAN = ["خط جدید مترو تهران هفته آینده افتتاح می‌شود و به گفته مسئولان کرایه آن کمتر از اتوبوس است",
           "خط جدید مترو تهران هفته آینده افتتاح می‌شود و به گفته مسئولان کرایه‌اش کمتر از اتوبوس است"]
WORDS = ("river mountain coffee bicycle library winter garden piano teacher market window football "
         "sunrise engine harbor lantern orchard pepper castle meadow violin canyon ").split()


def _unrelated(n: int, rng: random.Random) -> list[str]:
    return [" ".join(rng.sample(WORDS, 12)) for _ in range(n)]


def _records() -> list[dict]:
    rng = random.Random(4)
    rows = []
    for i, text in enumerate(EDITS):
        platform = "x" if i % 2 == 0 else "telegram"
        rows.append(record(f"{platform}:c{i}", text, platform=platform, author=f"acct{i}", at=T0 + timedelta(hours=i)))
    rows.append(record("x:again", CAMPAIGN, author="acct0", at=T0 + timedelta(days=2)))
    rows.append(record("x:rt", CAMPAIGN, kind="repost", author="acct9", at=T0 + timedelta(hours=5)))
    for i, text in enumerate(PERSIAN):
        rows.append(record(f"telegram:p{i}", text, platform="telegram", author=f"fa{i}", at=T0 + timedelta(hours=i)))
    rows += [record("x:s1", "good morning all", author="a"), record("x:s2", "good morning all", author="b")]
    rows += [record(f"x:u{i}", t, author=f"u{i}", at=T0 + timedelta(minutes=i)) for i, t in enumerate(_unrelated(200, rng))]
    return rows


def test_planted_duplicates_form_exactly_their_clusters():
    enricher = NearDuplicates()
    rows = _records()
    part = enricher.extract(table(rows))
    keys = set(part.filter(pc.is_valid(part.column("signature"))).column("key").to_pylist())
    assert "x:rt" not in keys, "a repost is a share, not a copy"
    assert not {"x:s1", "x:s2"} & keys, "texts shorter than min_words are left out"
    out = enricher.combine([part.slice(0, 150), part.slice(150)], NOW)  # two parts, as from two batches
    clusters = {tuple(sorted(m)) for m in _members(out)}
    assert clusters == {("telegram:c1", "telegram:c3", "x:again", "x:c0", "x:c2"), ("telegram:p0", "telegram:p1")}
    campaign = next(c for c in out["clusters"].to_pylist() if c["first_key"] == "x:c0")
    assert campaign["member_count"] == 5 and campaign["account_count"] == 4
    assert campaign["accounts"] == ["acct0", "acct1", "acct2", "acct3"]
    assert campaign["platforms"] == ["telegram", "x"]
    assert campaign["first_seen"] == T0 and campaign["last_seen"] == T0 + timedelta(days=2)
    assert campaign["min_similarity"] >= 0.6 and campaign["cluster_id"].startswith("nd-")
    sims = {m["key"]: m["similarity"] for m in out["members"].to_pylist()}
    assert sims["x:c0"] == sims["x:again"] == 1.0 and sims["telegram:c1"] < 1.0


def _members(out) -> list[list[str]]:
    by: dict[str, list[str]] = {}
    for row in out["members"].to_pylist():
        by.setdefault(row["cluster_id"], []).append(row["key"])
    return list(by.values())


def test_the_latest_observation_of_a_key_counts_and_ids_are_stable():
    enricher = NearDuplicates()
    first = enricher.extract(table([record("x:c0", CAMPAIGN, author="a"), record("x:c2", EDITS[2], author="b")]))
    assert len(_members(enricher.combine([first], NOW))) == 1
    # x:c2 edited into something else in a later batch: no cluster any more
    later = enricher.extract(table([record("x:c2", " ".join(WORDS[:14]), author="b")]))
    assert enricher.combine([first, later], NOW)["clusters"].num_rows == 0
    shortened = enricher.extract(table([record("x:c2", "too short now", author="b")]))  # no signature at all
    assert enricher.combine([first, shortened], NOW)["clusters"].num_rows == 0
    again = enricher.combine([first], NOW)["clusters"].column("cluster_id").to_pylist()
    assert again == enricher.combine([first], NOW)["clusters"].column("cluster_id").to_pylist()


def test_threshold_is_a_parameter_of_the_stamp():
    strict = NearDuplicates(threshold=0.95)
    out = strict.combine([strict.extract(table(_records()))], NOW)
    assert {tuple(sorted(m)) for m in _members(out)} == {("telegram:c3", "x:again", "x:c0")}  # links, @handles aside
    assert strict.stamp != NearDuplicates().stamp


def test_shingles_ignore_case_links_handles_and_punctuation():
    assert set(shingles("Hello, World! https://x.y/z @me")) == set(shingles("hello world"))


def test_documents_carry_clusters_and_memberships_labelled_inferred():
    enricher = NearDuplicates()
    out = enricher.combine([enricher.extract(table(_records()))], NOW)
    docs = list(enricher.documents("clusters", out["clusters"], NOW)) + \
        list(enricher.documents("members", out["members"], NOW))
    assert {d["kind"] for d in docs} == {"cluster", "record"}
    assert all(d["inferred"] and d["tenant"] == "acme" and d["updated_at"] == "2026-04-01T00:00:00Z" for d in docs)
    member = next(d for d in docs if d["key"] == "near_duplicates:telegram:c1")
    assert member["record_key"] == "telegram:c1" and member["near_duplicates"]["cluster_id"].startswith("nd-")


def test_batched_signatures_equal_datasketchs_own_minhash():
    """The signatures are computed for many texts at once; they must stay exactly datasketch's, so stored
    signatures and the library's LSH parameters keep meaning what they say."""
    import zlib

    import numpy as np
    from datasketch import MinHash

    from crawl_assets.enrich.near_duplicates import minhash_signatures, shingles

    texts = [shingles(t) for t in ("the same slogan copied by many accounts today", "قطعی برق در تهران ادامه دارد",
                                   "one", "a b c d e f g h i j k l m n o p")] * 1300  # more than one batch
    for num_perm, seed in ((64, 1), (128, 7)):
        expected = [m.hashvalues for m in MinHash.generator(texts, num_perm=num_perm, seed=seed, hashfunc=zlib.crc32)]
        assert np.array_equal(minhash_signatures(texts, num_perm, seed), np.array(expected))


def test_copies_of_one_text_alone_are_one_cluster():
    """Only identical texts (one distinct signature, so no LSH pair at all) still make their cluster."""
    enricher = NearDuplicates()
    rows = [record(f"x:{i}", CAMPAIGN, author=f"acct{i}", at=T0 + timedelta(hours=i)) for i in range(3)]
    [cluster] = enricher.combine([enricher.extract(table(rows))], NOW)["clusters"].to_pylist()
    assert cluster["member_count"] == 3 and cluster["first_key"] == "x:0" and cluster["min_similarity"] == 1.0
    single = enricher.combine([enricher.extract(table(rows[:1]))], NOW)
    assert single["clusters"].num_rows == 0 and single["members"].num_rows == 0


def test_a_threshold_without_lsh_bands_is_refused_when_configured():
    import pytest

    with pytest.raises(ValueError, match="'threshold' 1.0 with 'num_perm' 64 leaves too few LSH bands"):
        NearDuplicates(threshold=1.0)
    assert NearDuplicates(threshold=0.99, num_perm=512).params["threshold"] == 0.99


def _planted_signatures():
    """40,000 random signatures; rows 1000-1999 copy rows 0-999, rows 3000-3099 agree with rows 2000-2099 in
    56 of 64 positions (near duplicates)."""
    import numpy as np

    sigs = np.random.default_rng(1).integers(0, 2**32, size=(40_000, 64), dtype=np.uint32)
    sigs[1000:2000] = sigs[:1000]
    sigs[3000:3100, :56] = sigs[2000:2100, :56]
    return sigs


def test_distinct_rows_are_numpys_unique_gathered_in_the_callers_array():
    import numpy as np

    from crawl_assets.enrich.signatures import distinct_rows

    sigs = _planted_signatures()
    work = sigs.copy()
    distinct, inverse = distinct_rows(work)
    assert np.shares_memory(distinct, work) and len(distinct) == len(np.unique(sigs, axis=0)) == 39_000
    assert np.array_equal(distinct[inverse], sigs)
    assert np.array_equal(distinct[:1000], sigs[:1000]) and np.array_equal(distinct[1000:1010], sigs[2000:2010])


def test_clustering_holds_no_second_copy_of_the_signatures(monkeypatch):
    """The distinct signatures are gathered in place and rows compared ROW_CHUNK at a time, so what the
    clustering allocates stays well under one more copy of the signatures (np.unique's sorted copies took three)."""
    import tracemalloc

    from crawl_assets.enrich import signatures

    monkeypatch.setattr(signatures, "ROW_CHUNK", 1000)
    sigs = _planted_signatures()
    size = sigs.nbytes
    NearDuplicates()._cluster(sigs[:100].copy())  # imports are not the work
    tracemalloc.start()
    try:
        groups = NearDuplicates()._cluster(sigs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert groups == sorted([[i, i + 1000] for i in range(1000)] + [[i, i + 1000] for i in range(2000, 2100)])
    assert peak < 0.6 * size, peak / size


def test_agreeing_positions_are_counted_as_count_nonzero_counts_them():
    import numpy as np

    from crawl_assets.enrich.signatures import agreeing

    rng = np.random.default_rng(4)
    for width in (16, 20, 64, 248, 256):
        sigs = rng.integers(0, 3, size=(500, width), dtype=np.uint32)
        i, j = rng.integers(0, 500, 2000), rng.integers(0, 500, 2000)
        assert np.array_equal(agreeing(sigs, i, j), np.count_nonzero(sigs[i] == sigs[j], axis=1)), width


def test_a_bucket_larger_than_the_pair_limit_is_handed_out_once():
    import numpy as np

    from crawl_assets.enrich.near_duplicates import _bucket_pairs

    order, starts, sizes = np.arange(20), np.array([0, 10]), np.array([5, 5])  # two buckets of 10 pairs each
    for limit in (3, 4, 10, 100):
        pairs = np.concatenate(list(_bucket_pairs(order, starts, sizes, limit))).tolist()
        assert len(pairs) == len(set(pairs)) == 20, limit
