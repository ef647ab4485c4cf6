"""The peers of bench/persian_search_eval.py, run in their own interpreter: words in, their lemmas out.

    <peers-python> bench/persian_search/peers.py < words.json > lemmas.json

Input: a JSON list of words. Output: {"hazm": [...], "parsivar": [...], "PersianStemmer": [...], "seconds": {...}},
one lemma per word and peer, in input order. hazm 0.10 pins numpy==1.24.3 (and pulls gensim, nltk,
scikit-learn), which crawl_assets' own environment cannot take, hence a separate virtualenv:

    python3.11 -m venv .venv-persian-peers
    .venv-persian-peers/bin/pip install hazm==0.10.0 parsivar==0.2.3.1 PersianStemmer==1.0.0

All three work offline (their word lists ship inside the packages).
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    words = json.load(sys.stdin)
    out: dict = {"seconds": {}}
    from hazm import Lemmatizer

    lemmatizer = Lemmatizer()
    t = time.perf_counter()
    out["hazm"] = [lemmatizer.lemmatize(w) for w in words]
    out["seconds"]["hazm"] = time.perf_counter() - t
    from parsivar import FindStems

    stems = FindStems()
    t = time.perf_counter()
    out["parsivar"] = [stems.convert_to_stem(w) for w in words]
    out["seconds"]["parsivar"] = time.perf_counter() - t
    from PersianStemmer import PersianStemmer

    stemmer = PersianStemmer()
    t = time.perf_counter()
    out["PersianStemmer"] = [stemmer.run(w) for w in words]
    out["seconds"]["PersianStemmer"] = time.perf_counter() - t
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
