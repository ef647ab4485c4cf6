"""Train the shipped baseline sentiment model and print its measured accuracy.

    python -m crawl_assets.enrich.models.train_baseline [--out DIR]

Data: ``sentiment_labelled.tsv`` beside this file: 360 short texts written for this project (app reviews,
support messages, social posts; 60 per label and language), labels positive / negative / neutral, in
Persian and English. Texts are cleaned with ``text_clean``'s rules first, as the classifier reads
``text_clean``.

Model: character n-grams (2-4, within word boundaries; they carry Persian and English alike without a
tokenizer), hashed into 32768 features, with sublinear TF-IDF, then a multinomial logistic regression. Accuracy is measured by 5-fold
stratified cross-validation (every text predicted once by a model that did not see it), per language too,
and written with the model's description to ``sentiment_baseline.json``; the model is fitted on all texts
and saved with ``skops.io.dump`` as ``sentiment_baseline.skops``. A baseline: enough to exercise the hook
end to end and to compare a real model against, not a sentiment model to publish results with.
"""

from __future__ import annotations

import argparse
import csv
import json
import zipfile
from pathlib import Path

HERE = Path(__file__).parent
DATA = HERE / "sentiment_labelled.tsv"
SEED = 7


def load(path: Path = DATA) -> tuple[list[str], list[str], list[str]]:
    """(cleaned texts, labels, languages) of the labelled set."""
    from crawl_assets.normalize.text import clean_text

    texts, labels, langs = [], [], []
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            texts.append(clean_text(row["text"]))
            labels.append(row["label"])
            langs.append(row["lang"])
    return texts, labels, langs


def pipeline():
    import numpy as np
    from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    # hashed n-grams: no vocabulary to store (skops writes a vocabulary as one file per entry: megabytes)
    return Pipeline([
        ("ngrams", HashingVectorizer(analyzer="char_wb", ngram_range=(2, 4), n_features=2 ** 15, lowercase=True,
                                     alternate_sign=False, norm=None, dtype=np.float64)),
        ("tfidf", TfidfTransformer(sublinear_tf=True)),
        ("clf", LogisticRegression(C=10.0, max_iter=2000, random_state=SEED)),
    ])


def evaluate(texts: list[str], labels: list[str], langs: list[str]) -> dict:
    from sklearn.metrics import accuracy_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    strata = [f"{label}/{lang}" for label, lang in zip(labels, langs)]
    folds = list(StratifiedKFold(n_splits=5, shuffle=True, random_state=SEED).split(texts, strata))
    predicted = cross_val_predict(pipeline(), texts, labels, cv=folds)
    per_lang = {}
    for lang in sorted(set(langs)):
        rows = [i for i, x in enumerate(langs) if x == lang]
        per_lang[lang] = round(accuracy_score([labels[i] for i in rows], [predicted[i] for i in rows]), 4)
    majority = max(labels.count(x) for x in set(labels)) / len(labels)
    return {"method": "5-fold stratified cross-validation (by label and language), seed 7",
            "accuracy": round(accuracy_score(labels, predicted), 4), "accuracy_by_language": per_lang,
            "majority_class_accuracy": round(majority, 4), "texts": len(texts)}


def train(out: Path = HERE) -> dict:
    import skops.io as sio
    import sklearn

    texts, labels, langs = load()
    report = evaluate(texts, labels, langs)
    model = pipeline().fit(texts, labels)
    out.mkdir(parents=True, exist_ok=True)
    sio.dump(model, out / "sentiment_baseline.skops", compression=zipfile.ZIP_DEFLATED, compresslevel=9)
    card = {"model": "sentiment_baseline.skops", "task": "sentiment", "labels": sorted(set(labels)),
            "languages": sorted(set(langs)), "data": DATA.name, "trained_with": f"scikit-learn {sklearn.__version__}",
            "evaluation": report}
    (out / "sentiment_baseline.json").write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return card


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="folder for the model and its card (default: here)")
    card = train(parser.parse_args().out)
    ev = card["evaluation"]
    print(f"baseline sentiment model: {ev['texts']} labelled texts, {ev['method']}")
    print(f"accuracy {ev['accuracy']:.1%} (majority class {ev['majority_class_accuracy']:.1%}); by language: "
          + ", ".join(f"{k} {v:.1%}" for k, v in ev["accuracy_by_language"].items()))


if __name__ == "__main__":
    main()
