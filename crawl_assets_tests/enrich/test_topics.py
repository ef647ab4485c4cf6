"""Topics: a planted mixture is recovered (adjusted Rand index), topics are described by stems and surface
forms, ids persist across re-fits and erasures where topics persist, the re-fit policy keeps a model while
the tenant barely changed, and only the latest observation of a record counts."""

from __future__ import annotations

import warnings
from datetime import datetime, timedelta, timezone

import pytest
from sklearn.metrics import adjusted_rand_score

from crawl_assets.enrich import store
from crawl_assets.enrich.base import CombineContext
from crawl_assets.enrich.run import combine_tenant, enrich_source, read_tenant_table
from crawl_assets.enrich.terms import stem, terms
from crawl_assets.enrich.topic_model import match_ids
from crawl_assets.enrich.topics import Topics
from crawl_assets.erasure.features import erase_feature_files
from crawl_assets.lake import Lake
from crawl_assets.normalize.text import clean_text
from crawl_assets_tests.enrich.planted import TOPICS, topic_records
from crawl_assets_tests.enrich.records import batch_id, record, table, write_part

NOW = datetime(2026, 4, 1, tzinfo=timezone.utc)
SRC = "acme.x.main"


def _combine(enricher: Topics, parts, previous=None, now=NOW):
    return enricher.combine([enricher.extract(table(p)) for p in parts], CombineContext("acme", now, previous or {}))


def _primary(out) -> dict[str, int]:
    a = out["assignments"]
    return dict(zip(a.column("key").to_pylist(), a.column("topic_id").to_pylist()))


def _topic_of(out, rows, truth) -> dict[str, int]:
    """Planted topic -> the id most of its records were given."""
    got = _primary(out)
    votes: dict[str, dict[int, int]] = {}
    for row, name in zip(rows, truth):
        if row["key"] in got:
            votes.setdefault(name, {}).setdefault(got[row["key"]], 0)
            votes[name][got[row["key"]]] += 1
    return {name: max(v, key=v.get) for name, v in votes.items()}


def test_a_planted_mixture_is_recovered():
    rows, truth = topic_records(30)
    out = _combine(Topics(topics=9), [rows])
    got = _primary(out)
    ari = adjusted_rand_score(truth, [got.get(r["key"], -1) for r in rows])
    assert ari >= 0.7, ari
    topics = out["topics"].to_pylist()
    assert len(topics) == 9 and out["assignments"].num_rows == len(rows)
    assert sum(t["records"] for t in topics) >= len(rows)  # a record may have several topics
    for planted, topic_id in _topic_of(out, rows, truth).items():
        described = next(t for t in topics if t["topic_id"] == topic_id)
        vocabulary = {clean_text(w).replace("\u200c", "") for w in TOPICS[planted][1].split()}
        assert sum(f.replace("\u200c", "") in vocabulary for f in described["forms"][:5]) >= 4, (planted, described)
        assert described["label"] == " · ".join(described["forms"][:3])
    assert all(t["enricher"] == "topics" and t["inferred"] for t in topics)


def test_a_corpus_the_model_fits_exactly_warns_nothing():
    """A few repeated texts are factorized exactly: sklearn's reconstruction error then rounds below zero
    (its square root a RuntimeWarning); the topics are unaffected and nothing is printed to the user."""
    slogan = "everyone must join the protest at the central square tomorrow at noon"
    rows = [record(f"x:d{i}", slogan + "!" * i) for i in range(3)]
    rows += [record(f"x:t{i}", f"news of the day number {i}") for i in range(16)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = _combine(Topics(), [rows])
    assert out["topics"].num_rows >= 1
    assert set(_primary(out)) >= {"x:d0", "x:d1", "x:d2"}


def test_terms_are_stemmed_and_shown_by_their_surface_forms():
    assert terms(clean_text("برق‌ها و نیروگاه‌های تهران، the storms")) == [
        ("برق", "برق\u200cها"), ("نیروگاه", "نیروگاه\u200cهای"), ("تهران", "تهران"), ("storm", "storms")]
    assert stem(clean_text("المستشفيات")) == stem(clean_text("مستشفى")) == clean_text("مستشفى")
    assert [w for w, _ in terms("see https://t.co/x @handle 2026 #قطعی_برق")] == ["see", "قطعی", "برق"]
    # the surface form seen most stands for its stem in a topic's forms
    rows, _ = topic_records(30)
    out = _combine(Topics(topics=9), [rows])
    forms = [f for t in out["topics"].to_pylist() for f in t["forms"]]
    assert not any(f.endswith("\u200cها") for f in forms), "the singular is the form seen most"


def test_topic_ids_persist_across_refits_and_new_topics_get_new_ids():
    rows, truth = topic_records(30)
    first = _combine(Topics(topics=9), [rows])
    ids = _topic_of(first, rows, truth)
    more, more_truth = topic_records(30, seed=8, start=10_000)
    again = _combine(Topics(topics=9, refit_growth=0), [rows, more],
                     previous={"topic_ids": first["topic_ids"], "model": first["model"]},
                     now=NOW + timedelta(days=1))
    assert _topic_of(again, rows + more, truth + more_truth) == ids, "a topic that persists keeps its id"
    assert again["topics"].column("fitted_at")[0].as_py() == NOW + timedelta(days=1), "re-fitted"
    # a topic that was not there before is given an id never used
    known = first["topic_ids"]
    new_ids, registry = match_ids([["zzz", "yyy"], *[t for t in known.column("terms").to_pylist()[1:]]], known,
                                  0.3, NOW)
    assert new_ids[0] == 10 and new_ids[1:] == known.column("topic_id").to_pylist()[1:]
    assert registry.column("topic_id").to_pylist() == [*range(1, 11)], "the id no fit matched stays reserved"


def test_the_refit_policy_keeps_the_model_while_the_tenant_barely_changed():
    rows, truth = topic_records(30)
    first = _combine(Topics(topics=9), [rows])
    previous = {"topic_ids": first["topic_ids"], "model": first["model"]}
    extra, _ = topic_records(1, seed=9, start=20_000)  # 9 records: 3% more
    kept = _combine(Topics(topics=9), [rows, extra], previous=previous, now=NOW + timedelta(days=1))
    assert kept["topics"].column("fitted_at")[0].as_py() == NOW, "model reused"
    assert len(_primary(kept)) == len(rows) + len(extra), "new records are assigned with the kept model"
    old = _combine(Topics(topics=9), [rows, extra], previous=previous, now=NOW + timedelta(days=8))
    assert old["topics"].column("fitted_at")[0].as_py() == NOW + timedelta(days=8), "older than refit_days"
    grown, _ = topic_records(10, seed=10, start=30_000)  # 90 records: 33% more
    refit = _combine(Topics(topics=9), [rows, grown], previous=previous, now=NOW + timedelta(days=1))
    assert refit["topics"].column("fitted_at")[0].as_py() == NOW + timedelta(days=1)
    other_stamp = _combine(Topics(topics=9, min_weight=0.25), [rows, extra], previous=previous,
                           now=NOW + timedelta(days=1))
    assert other_stamp["topics"].column("fitted_at")[0].as_py() == NOW + timedelta(days=1), "a new stamp re-fits"


def test_only_the_latest_observation_of_a_record_counts():
    rows, truth = topic_records(20)
    target = next(i for i, name in enumerate(truth) if name == "weather")
    cooking = next(i for i, name in enumerate(truth) if name == "cooking")
    later = dict(rows[target], text=rows[cooking]["text"], text_clean=rows[cooking]["text_clean"])
    out = _combine(Topics(topics=9), [rows, [later]])
    got = _primary(out)
    assert got[rows[target]["key"]] == got[rows[cooking]["key"]]
    assert out["assignments"].num_rows == len(rows)


def test_a_tenant_without_enough_text_has_no_topics():
    out = _combine(Topics(), [[dict(r, text="", text_clean="") for r in topic_records(1)[0]]])
    assert out["topics"].num_rows == 0 and out["assignments"].num_rows == 0


@pytest.mark.parametrize("bad", [{"topics": 0}, {"max_df": 1.5}, {"refit_growth": -1}, {"topics": "x"}])
def test_bad_parameters_are_named(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        Topics(**bad)


def test_in_the_lake_ids_survive_an_erasure_and_the_rest_goes(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    rows, truth = topic_records(30)
    write_part(lake, rows[:150], batch_id(1))
    write_part(lake, rows[150:], batch_id(2))
    enricher = Topics(topics=9)
    enrich_source(lake, enricher, "acme", "x", SRC, now=NOW)
    before = read_tenant_table(lake, enricher, "acme", "assignments")
    ids = _topic_of({"assignments": before}, rows, truth)
    assert lake.exists(store.state_path("topics", "acme", "topic_ids"))
    # an erasure rewrites part 2 without the erased records: the part's features and the tenant tables go,
    # the topic ids (no record, key, author or text) stay
    erased = {r["key"] for r in rows[150:160]}
    lake.remove(lake.table_part("normalized_records", "acme", "x", SRC, batch_id(2)))
    write_part(lake, [r for r in rows[150:] if r["key"] not in erased], batch_id(3))
    report = erase_feature_files(lake, "acme", erased)
    assert report.parts_removed == 1 and report.tenant_tables_removed == 3
    assert read_tenant_table(lake, enricher, "acme", "assignments") is None
    ids_table = store.read_table(lake, store.state_path("topics", "acme", "topic_ids"))
    assert set(ids_table.column_names) == {"enricher", "enricher_version", "inferred", "topic_id", "terms",
                                           "first_fitted", "last_fitted"}
    enrich_source(lake, enricher, "acme", "x", SRC, now=NOW + timedelta(days=1))
    after = read_tenant_table(lake, enricher, "acme", "assignments")
    assert not erased & set(after.column("key").to_pylist())
    kept = [(r, t) for r, t in zip(rows, truth) if r["key"] not in erased]
    assert _topic_of({"assignments": after}, [r for r, _ in kept], [t for _, t in kept]) == ids
    assert combine_tenant(lake, enricher, "acme", now=NOW + timedelta(days=2)).rebuilt is False


def test_the_matrix_and_the_assignment_in_chunks_equal_them_at_once(monkeypatch):
    """Memory follows a chunk of records, not the tenant: the TF-IDF rows and each record's topics computed
    chunk by chunk are those computed at once."""
    import numpy as np

    from crawl_assets.enrich import topic_model, topics
    from crawl_assets.enrich.topic_model import Corpus

    rows, _ = topic_records(30)
    enricher = Topics(topics=9)
    corpus = Corpus.read([enricher.extract(table(rows))])
    vocab, idf = corpus.vocabulary(3, 0.5, 20_000)
    whole = corpus.tfidf(vocab, idf)
    for start in range(0, corpus.rows, 7):
        part = corpus.tfidf(vocab, idf, start, start + 7)
        assert part.shape == whole[start:start + 7].shape and (part != whole[start:start + 7]).nnz == 0
    monkeypatch.setattr(topic_model, "TRANSFORM_CHUNK", 7)
    sample = np.arange(0, corpus.rows, 3)
    assert (corpus.tfidf_rows(vocab, idf, sample) != whole[sample]).nnz == 0
    assert corpus.distinct_terms(vocab).tolist() == np.diff(whole.indptr).tolist()
    model = enricher._fit(corpus, NOW)
    model.topic_ids = list(range(1, len(model.components) + 1))
    weights = model.project(corpus, 300)
    weights[::5] = 0  # records without a topic too
    at_once = enricher._assign(corpus, model, weights)
    monkeypatch.setattr(topics, "TRANSFORM_CHUNK", 7)
    assert enricher._assign(corpus, model, weights).equals(at_once)
    assert at_once.num_rows == np.count_nonzero(weights.sum(axis=1) > 0) > 0


def test_the_vocabulary_is_counted_chunk_by_chunk_and_leaves_the_corpus_as_it_was(monkeypatch):
    """Document frequencies are summed over TRANSFORM_CHUNK records at a time (the tenant's whole count matrix
    is never built: what vocabulary() allocates stays under the corpus's own term ids), they equal the whole
    matrix's, and the corpus's term ids are untouched (scipy sums duplicates in place)."""
    import tracemalloc

    import numpy as np

    from crawl_assets.enrich import topic_model

    monkeypatch.setattr(topic_model, "TRANSFORM_CHUNK", 2000)
    rng = np.random.default_rng(3)
    corpus = topic_model.Corpus()
    corpus.words = np.array([f"w{i:03d}" for i in range(300)], dtype=object)
    corpus.rows = 100_000
    corpus.lengths = rng.integers(5, 25, corpus.rows)
    corpus.term_ids = (rng.zipf(1.3, int(corpus.lengths.sum())) % 300).astype(np.int32)
    ids = corpus.term_ids.copy()
    whole = corpus.counts()  # the whole matrix (here only to compare)
    df = np.bincount(whole.indices, minlength=300)
    ok = np.flatnonzero((df >= 3) & (df <= 0.5 * corpus.rows))
    expected = ok[np.lexsort((corpus.words[ok].astype(str), -df[ok]))][:100]
    del whole
    corpus.vocabulary(3, 0.5, 100)
    tracemalloc.start()
    try:
        vocab, idf = corpus.vocabulary(3, 0.5, 100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.array_equal(vocab, expected) and np.allclose(idf, np.log((1 + corpus.rows) / (1 + df[expected])) + 1)
    assert np.array_equal(corpus.term_ids, ids)
    assert peak < 0.5 * corpus.term_ids.nbytes, peak / corpus.term_ids.nbytes
