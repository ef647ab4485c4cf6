"""Bench: what ``text_lemma`` costs the index step, beside the same step without it.

The index step builds each record's bulk document from Arrow (``index.documents.record_documents``,
what ``pipeline/index/stage.py`` sends); with the lemma field it also lemmatizes ``text_clean`` word by word
(``persian.lemma``, one cache lookup per word already seen). Measured in this process, client side only
(the node's indexing of one more whitespace-analyzed field is in ``bench/es_sink.py``'s node CPU):

* ``without text_lemma``: ``record_documents`` with ``lemmas_of`` answering None (the peer: the step before
  issue 34, the same documents less one field);
* ``with, cold cache``: the lemmatizer's caches emptied before each run (every distinct word lemmatized once);
* ``with, warm cache``: a second pass in the same process (a long-running sink's steady state).

Texts: the 2,200 posts of ``bench/persian_search/posts.tsv`` (our own writing), each record with one of them
and a word of its own (``new_words``: a share of records whose word is new, as a stream keeps meeting names),
in ~1 KB records shaped like ``bench/es_sink.py``'s. Medians of ``--runs`` runs.

    python bench/lemma_cost.py [--records 20000] [--runs 3] [--batch 2000]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import crawl_assets.index.documents as documents  # noqa: E402
from crawl_assets.lake.tables import records_to_arrow  # noqa: E402
from crawl_assets.persian import lemma as lemma_module  # noqa: E402
from es_sink import synthetic_records  # noqa: E402  bench/es_sink.py

POSTS = REPO / "bench" / "persian_search" / "posts.tsv"
LETTERS = "ابپتثجچحخدذرزسشصضطظعغفقکگلمنوهی"


def texts() -> list[str]:
    with open(POSTS, encoding="utf-8") as f:
        return [row["text"] for row in csv.DictReader(f, delimiter="\t")]


def new_word(i: int) -> str:
    """A Persian-letter word of its own for record ``i`` (five letters from its number)."""
    out = []
    for _ in range(5):
        i, r = divmod(i, len(LETTERS))
        out.append(LETTERS[r])
    return "".join(out)


def batches(n: int, size: int) -> list[Any]:
    posts = texts()
    records = []
    for i, rec in enumerate(synthetic_records(n)):
        text = f"{posts[i % len(posts)]} {new_word(i)}"
        records.append({**rec, "text": text, "text_clean": text})
    return [records_to_arrow(records[i:i + size]).to_batches()[0] for i in range(0, n, size)]


@contextmanager
def no_lemmas():
    saved = documents.lemmas_of
    documents.lemmas_of = lambda *_: None  # the counterfactual: the same step less the field
    try:
        yield
    finally:
        documents.lemmas_of = saved


def clear_caches() -> None:
    lemma_module._CACHE.clear()
    for cache in lemma_module._TOKENS:
        cache.clear()


def one_run(parts: list[Any]) -> tuple[float, int]:
    start, size = time.perf_counter(), 0
    for batch in parts:
        encoded = documents.record_documents(batch, "bench")
        size += sum(len(s) for s in encoded.sources)
    return time.perf_counter() - start, size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=2_000)
    args = parser.parse_args()
    parts = batches(args.records, args.batch)
    results: dict[str, list[float]] = {"without text_lemma": [], "with, cold cache": [], "with, warm cache": []}
    sizes: dict[str, int] = {}
    with no_lemmas():
        one_run(parts)  # warm-up: imports, allocator, Arrow conversions
    for _ in range(args.runs):  # interleaved, medians
        with no_lemmas():
            seconds, sizes["without text_lemma"] = one_run(parts)
        results["without text_lemma"].append(seconds)
        clear_caches()
        seconds, sizes["with, cold cache"] = one_run(parts)
        results["with, cold cache"].append(seconds)
        seconds, sizes["with, warm cache"] = one_run(parts)
        results["with, warm cache"].append(seconds)
    if not all(sizes.values()) or sizes["with, cold cache"] <= sizes["without text_lemma"]:
        print("error: a phase produced no documents, or no lemma field", file=sys.stderr)
        return 2
    base = statistics.median(results["without text_lemma"])
    print(f"Index step's document building, {args.records} records in batches of {args.batch}, medians of {args.runs}")
    print(f"{'':<22}{'records/s':>12}{'us/record':>12}{'vs without':>12}{'bytes/record':>14}")
    for name, runs in results.items():
        median = statistics.median(runs)
        print(f"{name:<22}{args.records / median:>12,.0f}{median / args.records * 1e6:>12.1f}"
              f"{base / median:>11.2f}x{sizes[name] / args.records:>14.0f}")
    words = len({w for t in texts() for w in t.split()}) + args.records
    print(f"({words} distinct words; the lemma costs "
          f"{(statistics.median(results['with, cold cache']) - base) / args.records * 1e6:.1f} us/record cold, "
          f"{(statistics.median(results['with, warm cache']) - base) / args.records * 1e6:.1f} warm)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
