"""The classifier hook end to end: the shipped baseline labels texts; a user's scikit-learn pipeline loads
from a local path (skops; joblib only when allowed); unsafe or unknown files are refused with the reason."""

from __future__ import annotations

import json

import joblib
import pytest
import skops.io as sio
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from crawl_assets.enrich.classifier import BASELINE, Classifier, ClassifierError, load_model
from crawl_assets.enrich.models import train_baseline
from crawl_assets_tests.enrich.records import record, table

TOPICS = [("the match ended two nil, great goal", "sport"), ("the striker scored in the final", "sport"),
          ("the team won the league", "sport"), ("parliament passed the budget law", "politics"),
          ("the minister resigned after the vote", "politics"), ("elections are held next month", "politics")]


@pytest.fixture(autouse=True)
def models_root(tmp_path, monkeypatch):
    """The test's models live in its folder: make it the models root (CRAWL_MODELS)."""
    monkeypatch.setenv("CRAWL_MODELS", str(tmp_path))


def _topic_model():
    texts, labels = zip(*TOPICS)
    return Pipeline([("v", TfidfVectorizer()), ("c", LogisticRegression())]).fit(list(texts), list(labels))


def test_the_baseline_labels_sentiment_in_persian_arabic_and_english():
    rows = [record("x:1", "I love this app, it works perfectly, thank you"),
            record("x:2", "Terrible update, the app crashes every time"),
            record("x:3", "عالی بود، خیلی ممنونم از پشتیبانی"),
            record("x:4", "افتضاحه، پولم رو پس بدید"),
            record("x:5", ""),
            record("x:6", "الخدمة ممتازة وسريعة، شكرا لكم"),
            record("x:7", "التطبيق سيء جدا ويتوقف دائما"),
            record("x:8", "The delivery is not good at all"),  # negation
            record("x:9", "این برنامه اصلا خوب نیست"),  # Persian negation after the word
            record("x:10", "Great, the app crashed again 🙄"),  # sarcasm
            record("x:11", "The order arrived today 😍")]  # emoji
    enricher = Classifier()
    out = enricher.extract(table(rows))
    assert out.column("key").to_pylist() == [r["key"] for r in rows if r["text"]], "an empty text is not labelled"
    assert out.column("label").to_pylist() == ["positive", "negative", "positive", "negative", "positive", "negative",
                                               "negative", "negative", "negative", "positive"]
    row = out.to_pylist()[0]
    assert {s["label"] for s in row["scores"]} == {"positive", "negative", "neutral"}
    assert row["task"] == "sentiment" and row["model"].startswith("sentiment_baseline.skops#")
    assert row["inferred"] is True and row["enricher_version"] == enricher.stamp


def test_the_baseline_card_states_its_figures_per_language_against_the_previous_model():
    card = json.loads(BASELINE.with_suffix(".json").read_text())
    assert card["labels"] == ["negative", "neutral", "positive"] and card["languages"] == ["ar", "en", "fa"]
    assert card["data"]["evaluation_texts"] >= 1500
    figures = card["evaluation"]
    for lang in ("fa", "ar", "en"):
        assert figures["v2"]["by_language"][lang]["texts"] >= 500
        assert figures["v2"]["by_language"][lang]["accuracy"] >= card["target"]["accuracy_per_language"] == 0.85
        assert figures["v2"]["by_language"][lang]["accuracy"] > figures["v1"]["by_language"][lang]["accuracy"] + 0.2
        assert set(figures["v2"]["by_kind"][lang]) == {"plain", "negation", "sarcasm", "emoji", "neutral"}
    assert card["target"]["met"] is True


def test_the_evaluation_set_shares_no_phrase_with_training():
    from crawl_assets.enrich.models import make_sentiment_set as m

    train = {t for _, _, _, t in m.compose("en", "train", 200, 11)}
    evaluation = m.compose("en", "eval", 200, 35)
    assert not train & {t for _, _, _, t in evaluation}
    banks = m.BANKS["en"]
    seen = [a for a in banks["aspect"][0::2]]
    assert not any(t.lower().startswith(a) for _, _, kind, t in evaluation if kind == "plain" for a in seen)


def test_lexicon_features_read_negation_emoji_and_sarcasm():
    from crawl_assets.enrich.sentiment_lexicon import FEATURES, features

    def f(text):
        return dict(zip(FEATURES, features(text)))

    assert f("this is good")["positive"] == 1 and f("this is not good")["negated_positive"] == 1
    assert f("this is not good")["positive"] == 0
    assert f("خوب نیست")["negated_positive"] == 1 and f("خوب نیست")["positive"] == 0, "Persian: after the word"
    assert f("ليس جيدا")["negated_positive"] == 1
    assert f("it doesn't crash anymore")["negated_negative"] == 1
    assert f("ok 😍👍")["positive_emoji"] == 2 and f("😡")["negative_emoji"] == 1
    irony = f("Great, it crashed again 🙄")
    assert irony["sarcasm_marker"] == 1 and irony["ironic_praise"] == 1
    assert f("great work, thanks")["ironic_praise"] == 0
    assert f("the payment went through")["negated_positive"] == 0, "no negator inside a word"


def test_the_training_script_reproduces_the_shipped_model(tmp_path):
    card = train_baseline.train(tmp_path, peers=False)
    assert (tmp_path / "sentiment_baseline.skops").stat().st_size < 1_000_000
    shipped = json.loads(BASELINE.with_suffix(".json").read_text())
    assert card["evaluation"]["v2"] == shipped["evaluation"]["v2"]
    model = load_model(tmp_path / "sentiment_baseline.skops", trusted_types=train_baseline.TRUSTED)
    assert list(model.predict_proba(["great, thanks!"]).shape) == [1, 3]


def test_a_user_model_from_a_local_path_labels_in_batches(tmp_path):
    path = tmp_path / "topics.skops"
    sio.dump(_topic_model(), path)
    enricher = Classifier(model=str(path), task="topic", batch_size=2)
    rows = [record(f"x:{i}", t) for i, (t, _) in enumerate(TOPICS)]
    out = enricher.extract(table(rows))
    assert out.column("label").to_pylist() == [label for _, label in TOPICS]
    assert set(out.column("task").to_pylist()) == {"topic"}
    assert enricher.stamp != Classifier().stamp
    # the stamp follows the model's bytes, not its location
    moved = tmp_path / "elsewhere" / "topics.skops"
    moved.parent.mkdir()
    moved.write_bytes(path.read_bytes())
    assert Classifier(model=str(moved), task="topic", batch_size=2).stamp == enricher.stamp
    sio.dump(Pipeline([("v", TfidfVectorizer()), ("c", LogisticRegression(C=0.5))]).fit(
        [t for t, _ in TOPICS], [label for _, label in TOPICS]), path)
    assert Classifier(model=str(path), task="topic", batch_size=2).stamp != enricher.stamp, "a retrained model"


def test_pickles_load_only_when_allowed(tmp_path):
    path = tmp_path / "topics.joblib"
    joblib.dump(_topic_model(), path)
    with pytest.raises(ClassifierError, match="allow_pickle"):
        Classifier(model=str(path)).extract(table([record("x:1", "the team won")]))
    out = Classifier(model=str(path), allow_pickle=True).extract(table([record("x:1", "the team won the final")]))
    assert out.column("label").to_pylist() == ["sport"]


def test_files_that_are_not_models_are_refused_with_the_reason(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        Classifier(model=str(tmp_path / "missing.skops"))
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ClassifierError, match="unknown model format"):
        load_model(tmp_path / "notes.txt")
    hf = tmp_path / "hf-model"
    hf.mkdir()
    with pytest.raises(ClassifierError, match="without config.json"):
        load_model(hf)
    (hf / "config.json").write_text("{}")
    try:
        import transformers  # noqa: F401
    except ImportError:
        with pytest.raises(ClassifierError, match="install transformers"):
            load_model(hf)
    # a skops file holding a type skops does not trust is refused unless the user names it
    untrusted = tmp_path / "untrusted.skops"
    sio.dump({"model": _topic_model(), "extra": Marker()}, untrusted)
    name = f"{Marker.__module__}.Marker"
    with pytest.raises(ClassifierError, match=name):
        load_model(untrusted)
    with pytest.raises(ClassifierError, match="predict_proba"):  # trusted now, but a dict is no model
        load_model(untrusted, trusted_types=[name])
    with pytest.raises(ClassifierError, match="predict_proba"):
        load_model(_dumped(tmp_path, {"not": "a model"}))


class Marker:
    """A type skops does not know (its module is not in skops' trusted list)."""

    def __init__(self) -> None:
        self.value = 1


def _dumped(tmp_path, obj):
    path = tmp_path / "obj.skops"
    sio.dump(obj, path)
    return path
