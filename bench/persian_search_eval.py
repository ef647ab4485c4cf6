"""Persian word forms in search: today's analyzer, Elasticsearch's persian_stem, hazm, parsivar, PersianStemmer
and ours (crawl_assets.persian.lemma), side by side on a real node, on sets of our own writing.

    python bench/persian_search_eval.py                       # starts a test node (crawl_assets_tests/es_node)
    python bench/persian_search_eval.py --es http://127.0.0.1:9200 --peers-python .venv-persian-peers/bin/python

The sets (bench/persian_search/, written by ``make_sets.py``): word-form pairs in seven classes, must-not-match
pairs (a calibration part the lemmatizer's lists were written against; a held-out part they never were, whose
failing words this bench prints; held-out2, written before the rules for look-alikes changed, printed as a
figure only),
and 52 queries with their relevant posts among 2,200 short posts. Printed:

1. per class, recall: the share of pairs where a search for the base finds the form (both ways for ``zwnj``);
   goal >= 90% on each Persian class;
2. per class of must-not pairs, precision: the share where neither word finds the other; goal >= 90%;
3. nDCG@10 over the queries (binary relevance, relevant = about the query's word in any form), each
   variant searching the way the API would (exact fields boosted over its stemmed or lemma field);
4. lemmatizer cost per word (Python peers and ours; Elasticsearch's is inside the node).

"Finds" means what the API's search does: every token the analyzer makes of the query is in the document's
tokens of one field (``text``: ZWNJ as a space, ``text.joined``: ZWNJ removed, then the variant's own
field; the records template's ``text_clean`` and ``text_clean.joined``, under this bench's names). The variants:

* ``today``: the records template's ``text`` and ``text.joined`` alone;
* ``es_stem``: plus a ``persian_stem`` sub-field (Lucene's PersianStemFilter, after ``stemmer_override``
  with our irregular words and ``keyword_marker`` with our protected words; ``arabic_stem`` for Arabic);
* ``hazm``, ``parsivar``, ``PersianStemmer``: plus a lemma field each peer wrote (their lemma of each word);
* ``ours``: plus ``text_lemma`` as the index holds it (``crawl_assets.persian.lemma.lemma_text``).

A peer that cannot run is a failure (exit 2), not a line left out.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crawl_assets.index.indices import load_template  # noqa: E402
from crawl_assets.persian.lemma import WORD, fold, lemma, lemma_text  # noqa: E402

SETS = Path(__file__).with_name("persian_search")
PEERS = ("hazm", "parsivar", "PersianStemmer")
VARIANTS = ("today", "es_stem", *PEERS, "ours")
GOAL = 0.90
PARTS = ("calibration", "held-out", "held-out2")
INDEX = "persian-search-eval"
ZWNJ = "\u200c"


def read(name: str) -> list[dict[str, str]]:
    with open(SETS / name, encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def index_body(protected: list[str], overrides: list[str]) -> dict[str, Any]:
    analysis = json.loads(json.dumps(load_template("records")["template"]["settings"]["analysis"]))
    analysis["filter"].update({"persian_protect": {"type": "keyword_marker", "keywords": protected},
                               "persian_override": {"type": "stemmer_override", "rules": overrides}})
    norm = ["lowercase", "decimal_digit", "arabic_normalization", "persian_normalization"]
    analysis["analyzer"].update({
        "normalized": {"type": "custom", "char_filter": ["zwnj_remove"], "tokenizer": "standard", "filter": norm},
        "persian_stem_text": {"type": "custom", "char_filter": ["zwnj_remove"], "tokenizer": "standard",
                              "filter": [*norm, "persian_override", "persian_protect", "persian_stem"]},
        "arabic_stem_text": {"type": "custom", "tokenizer": "standard",
                             "filter": ["lowercase", "decimal_digit", "arabic_normalization", "arabic_stem"]}})
    lemma_field = {"type": "text", "analyzer": "whitespace"}
    return {"settings": {"number_of_shards": 1, "analysis": analysis},
            "mappings": {"properties": {
                "text": {"type": "text", "analyzer": "persian_text", "fields": {
                    "joined": {"type": "text", "analyzer": "persian_joined"},
                    "stem": {"type": "text", "analyzer": "persian_stem_text"},
                    "stem_ar": {"type": "text", "analyzer": "arabic_stem_text"}}},
                **{f"lemma_{v}": lemma_field for v in (*PEERS, "ours")}}}}


class Analyzer:
    """Tokens of one word under an index's analyzer, cached (one ``_analyze`` call per word and analyzer)."""

    def __init__(self, es: Any) -> None:
        self.es, self.cache = es, {}

    def tokens(self, analyzer: str, text: str) -> frozenset[str]:
        key = (analyzer, text)
        if key not in self.cache:
            resp = self.es.indices.analyze(index=INDEX, analyzer=analyzer, text=text)
            self.cache[key] = frozenset(t["token"] for t in resp["tokens"])
        return self.cache[key]


def finds(query: dict[str, frozenset[str]], doc: dict[str, frozenset[str]]) -> bool:
    """Whether a search for ``query`` finds ``doc``: one field holds every token of the query (and some)."""
    return any(q and q <= doc.get(field, frozenset()) for field, q in query.items())


def run_peers(python: str, words: list[str]) -> dict[str, Any]:
    done = subprocess.run([python, str(SETS / "peers.py")], input=json.dumps(words, ensure_ascii=False),
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"error: the peers failed under {python}: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--es", help="an Elasticsearch URL whose node has the analysis-common components "
                                     "(default: start the test node)")
    parser.add_argument("--peers-python", default=os.environ.get("CRAWL_PERSIAN_PEERS_PYTHON",
                                                                   str(ROOT / ".venv-persian-peers/bin/python")))
    args = parser.parse_args()
    if not Path(args.peers_python).exists():
        print(f"error: no peers interpreter at {args.peers_python} (see bench/persian_search/peers.py)", file=sys.stderr)
        return 2
    from elasticsearch import Elasticsearch

    with ExitStack() as stack:
        url = args.es
        if not url:
            from crawl_assets_tests.es_node.node import RealNode

            url = stack.enter_context(RealNode()).url
        es = Elasticsearch(url, request_timeout=120)
        return evaluate(es, args.peers_python)


def evaluate(es: Any, peers_python: str) -> int:
    pairs, must_not = read("pairs.tsv"), read("must_not.tsv")
    posts, queries = read("posts.tsv"), read("queries.tsv")
    es.indices.delete(index=INDEX, ignore_unavailable=True)
    es.indices.create(index=INDEX, body=index_body(["x"], ["x=>x"]))
    norm = Analyzer(es)
    protected = sorted({t for w in PROTECTED_WORDS() for t in norm.tokens("normalized", w)})
    overrides = sorted({f"{next(iter(norm.tokens('normalized', k)))} => {next(iter(norm.tokens('normalized', v)))}"
                        for k, v in IRREGULAR_WORDS() if norm.tokens("normalized", k) and norm.tokens("normalized", v)})
    es.indices.delete(index=INDEX)
    es.indices.create(index=INDEX, body=index_body(protected, overrides))
    an = Analyzer(es)

    words = sorted({w for p in pairs for w in (p["form"], p["base"])} | {w for p in must_not for w in (p["a"], p["b"])}
                   | {w for p in posts for w in WORD.findall(p["text"])} | {w for q in queries for w in WORD.findall(q["query"])})
    peer = run_peers(peers_python, words)
    lemmas: dict[str, dict[str, str]] = {v: dict(zip(words, peer[v])) for v in PEERS}
    t = time.perf_counter()
    lemmas["ours"] = {w: lemma(w) for w in words}
    seconds = {**peer["seconds"], "ours": time.perf_counter() - t}
    arabic_words = {w for p in pairs if p["class"] == "arabic" for w in (p["form"], p["base"])}
    for w in arabic_words:
        lemmas["ours"][w] = lemma(w, "ar")

    def fields(variant: str, word: str, arabic: bool = False) -> dict[str, frozenset[str]]:
        out = {"text": an.tokens("persian_text", word), "text.joined": an.tokens("persian_joined", word)}
        if variant == "es_stem":
            out["text.stem"] = an.tokens("arabic_stem_text" if arabic else "persian_stem_text", word)
        elif variant != "today":
            out["lemma"] = frozenset(lemmas[variant][word].split())
        return out

    # 1. recall per class
    hits: dict[str, Counter] = {v: Counter() for v in VARIANTS}
    totals: Counter = Counter()
    for p in pairs:
        cls, arabic = p["class"], p["class"] == "arabic"
        totals[cls] += 1
        for v in VARIANTS:
            form, base = fields(v, p["form"], arabic), fields(v, p["base"], arabic)
            ok = finds(base, form) and (cls != "zwnj" or finds(form, base))
            hits[v][cls] += ok
    print(f"Recall of word forms (a search for the base finds the form; goal >= {GOAL:.0%} per Persian class)")
    print(f"{'class':<14}{'pairs':>6}" + "".join(f"{v:>16}" for v in VARIANTS))
    for cls in totals:
        print(f"{cls:<14}{totals[cls]:>6}" + "".join(f"{hits[v][cls] / totals[cls]:>16.1%}" for v in VARIANTS))
    n = sum(totals.values())
    print(f"{'all':<14}{n:>6}" + "".join(f"{sum(hits[v].values()) / n:>16.1%}" for v in VARIANTS))

    # 2. precision on must-not pairs
    fp: dict[str, Counter] = {v: Counter() for v in VARIANTS}
    groups: Counter = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    for p in must_not:
        group = _part(p)
        groups[group] += 1
        for v in VARIANTS:
            a, b = fields(v, p["a"]), fields(v, p["b"])
            if finds(a, b) or finds(b, a):
                fp[v][group] += 1
                if v == "ours":
                    examples[group].append(f"{p['a']}/{p['b']}")
    print(f"\nPrecision on must-not-match pairs (neither finds the other; goal >= {GOAL:.0%})")
    print(f"{'part':<14}{'pairs':>6}" + "".join(f"{v:>16}" for v in VARIANTS))
    for group in PARTS:
        print(f"{group:<14}{groups[group]:>6}" + "".join(f"{1 - fp[v][group] / groups[group]:>16.1%}" for v in VARIANTS))
    total = sum(groups.values())
    print(f"{'all':<14}{total:>6}" + "".join(f"{1 - sum(fp[v].values()) / total:>16.1%}" for v in VARIANTS))
    listed = {fold(w).replace(ZWNJ, "") for w in (*PROTECTED_WORDS(), *(k for k, _ in IRREGULAR_WORDS()))}
    unnamed = [p for p in must_not if not {fold(p["a"]), fold(p["b"])} & listed]
    print("  ours on the pairs no whole-word list names (the rules alone):", "  ".join(
        f"{g} {sum(lemma(p['a']) != lemma(p['b']) for p in part) / len(part):.1%} of {len(part)}"
        for g in PARTS for part in [[p for p in unnamed if _part(p) == g]] if part))
    for group, items in examples.items():
        if group != "held-out2":  # its words stay unseen: the figure alone is printed
            print(f"  ours, {group}, found each other: {' '.join(items[:60])}")

    # 3. nDCG@10
    ndcg = rank(es, posts, queries, lemmas)
    print("\nnDCG@10 over the queries (binary relevance), and recall in the first 50")
    print(f"{'':<20}" + "".join(f"{v:>16}" for v in VARIANTS))
    print(f"{'nDCG@10':<20}" + "".join(f"{ndcg[v][0]:>16.3f}" for v in VARIANTS))
    print(f"{'recall@50':<20}" + "".join(f"{ndcg[v][1]:>16.1%}" for v in VARIANTS))
    print(f"\nLemmatizer cost per word ({len(words)} distinct words, Python):")
    for name, s in seconds.items():
        print(f"  {name:<16}{s / len(words) * 1e6:>10.1f} us")
    es.indices.delete(index=INDEX, ignore_unavailable=True)
    return 0


def _part(pair: dict[str, str]) -> str:
    """calibration, held-out or held-out2 (the class's prefix)."""
    return pair["class"].split("_")[0].replace("heldout", "held-out") if pair["class"].startswith("heldout") \
        else "calibration"


def PROTECTED_WORDS() -> list[str]:  # noqa: N802 - the lemmatizer's own lists, given to the ES variant
    from crawl_assets.persian.lexicon import PROTECTED

    return sorted(PROTECTED)


def IRREGULAR_WORDS() -> list[tuple[str, str]]:  # noqa: N802
    from crawl_assets.persian.lexicon import IRREGULAR

    return sorted(IRREGULAR.items())


def lemma_field(text: str, table: dict[str, str], variant: str) -> str:
    """A peer's lemma field: its lemma of each word; ours: ``text_lemma`` as the index holds it."""
    return lemma_text(text) if variant == "ours" else " ".join(table.get(w, w) for w in WORD.findall(text))


def rank(es: Any, posts: list[dict[str, str]], queries: list[dict[str, str]],
         lemmas: dict[str, dict[str, str]]) -> dict[str, tuple[float, float]]:
    from elasticsearch import helpers

    actions = []
    for p in posts:
        doc: dict[str, Any] = {"text": p["text"]}
        for v in (*PEERS, "ours"):
            doc[f"lemma_{v}"] = lemma_field(p["text"], lemmas[v], v)
        actions.append({"_index": INDEX, "_id": p["id"], "_source": doc})
    helpers.bulk(es, actions, refresh=True)

    def sqs(text: str, flds: list[str]) -> dict[str, Any]:
        return {"simple_query_string": {"query": text, "fields": flds, "default_operator": "and"}}

    out = {}
    for v in VARIANTS:
        gains, recalls = [], []
        for q in queries:
            relevant = set(q["relevant"].split())
            exact = sqs(q["query"], ["text^3", "text.joined^2"])
            if v == "today":
                query = exact
            elif v == "es_stem":
                query = sqs(q["query"], ["text^3", "text.joined^2", "text.stem"])
            else:
                query = {"bool": {"should": [exact, sqs(lemma_field(q["query"], lemmas[v], v), [f"lemma_{v}"])],
                                  "minimum_should_match": 1}}
            hits = es.search(index=INDEX, query=query, size=50, source=False)["hits"]["hits"]
            ids = [h["_id"] for h in hits]
            dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ids[:10]) if d in relevant)
            ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
            gains.append(dcg / ideal if ideal else 0.0)
            recalls.append(len(relevant & set(ids)) / len(relevant) if relevant else 0.0)
        out[v] = (sum(gains) / len(gains), sum(recalls) / len(recalls))
    return out


if __name__ == "__main__":
    sys.exit(main())
