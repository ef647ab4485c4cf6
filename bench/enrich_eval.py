"""Evaluation of the enrichers that find structure, on planted answers of our own (full sizes; the tests use
small ones): prints the figures docs/ENRICHMENT.md publishes.

* topics: the planted mixture of ``crawl_assets_tests/enrich/planted.py`` (nine topics, three per language)
  at ``--per-topic`` records each: adjusted Rand index of the planted topic against each record's heaviest
  topic (a record with none counts as its own cluster); then ``--growth`` more records of the same topics
  and a re-fit: the share of planted topics whose id (the id most of their records get) is the same;
* entities: ``--sentences`` planted sentences per language: precision, recall and F1 per language and type,
  a found entity counted right only with the planted span and type;
* sentiment: the shipped model's card (``crawl_assets/enrich/models/sentiment_baseline.json``, rewritten
  by ``python -m crawl_assets.enrich.models.train_baseline``).

Usage: python bench/enrich_eval.py [--per-topic 1000] [--growth 0.3] [--sentences 240]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _primary(out) -> dict[str, int]:
    a = out["assignments"]
    return dict(zip(a.column("key").to_pylist(), a.column("topic_id").to_pylist()))


def _ids(out, rows, truth) -> dict[str, int]:
    got = _primary(out)
    votes: dict[str, Counter] = {}
    for row, name in zip(rows, truth):
        if row["key"] in got:
            votes.setdefault(name, Counter())[got[row["key"]]] += 1
    return {name: v.most_common(1)[0][0] for name, v in votes.items()}


def topics(per_topic: int, growth: float) -> None:
    from sklearn.metrics import adjusted_rand_score

    from crawl_assets.enrich.base import CombineContext
    from crawl_assets.enrich.topics import Topics
    from crawl_assets_tests.enrich.planted import TOPICS, topic_records
    from crawl_assets_tests.enrich.records import table

    now = datetime(2026, 4, 1, tzinfo=timezone.utc)
    enricher = Topics(topics=len(TOPICS))
    rows, truth = topic_records(per_topic)
    started = time.process_time()
    parts = [enricher.extract(table(rows[i:i + 10_000])) for i in range(0, len(rows), 10_000)]
    out = enricher.combine(parts, CombineContext("eval", now))
    cpu = time.process_time() - started
    got = _primary(out)
    singles = iter(range(-1, -len(rows) - 1, -1))
    ari = adjusted_rand_score(truth, [got.get(r["key"], next(singles)) for r in rows])
    print(f"topics: {len(rows):,} records of {len(TOPICS)} planted topics: adjusted Rand index {ari:.3f} "
          f"(target >= 0.7); {len(got):,} records given a topic; {cpu:.1f} s CPU")
    more, more_truth = topic_records(max(1, int(per_topic * growth)), seed=8, start=len(rows))
    parts += [enricher.extract(table(more[i:i + 10_000])) for i in range(0, len(more), 10_000)]
    again = enricher.combine(parts, CombineContext("eval", now + timedelta(days=8),
                                                   {"model": out["model"], "topic_ids": out["topic_ids"]}))
    before, after = _ids(out, rows, truth), _ids(again, rows + more, truth + more_truth)
    kept = sum(before[name] == after.get(name) for name in before)
    print(f"topics: after {len(more):,} more records and a re-fit, {kept} of {len(before)} planted topics kept "
          f"their id; ids now {sorted(set(after.values()))}")


def entities(per_language: int) -> None:
    from crawl_assets.enrich.entities import find_entities
    from crawl_assets_tests.enrich.planted import entity_sentences

    stats: dict[tuple[str, str], list[int]] = {}
    for lang, text, gold in entity_sentences(per_language):
        found = {(e["start"], e["end"], e["type"]) for e in find_entities(text)}
        for kind in ("ALL", "PER", "ORG", "LOC"):
            f = {x for x in found if kind in ("ALL", x[2])}
            g = {x for x in gold if kind in ("ALL", x[2])}
            st = stats.setdefault((lang, kind), [0, 0, 0])
            st[0] += len(f & g)
            st[1] += len(f - g)
            st[2] += len(g - f)
    print(f"entities: {per_language} planted sentences per language; exact span and type")
    print(f"{'lang':<6}{'type':<6}{'precision':>10}{'recall':>8}{'F1':>7}{'planted':>9}")
    for (lang, kind), (tp, fp, fn) in stats.items():
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        print(f"{lang:<6}{kind:<6}{p:>10.3f}{r:>8.3f}{f1:>7.3f}{tp + fn:>9}")


def sentiment() -> None:
    from crawl_assets.enrich.classifier import BASELINE
    from crawl_assets.enrich.models.train_baseline import report

    print(report(json.loads(BASELINE.with_suffix(".json").read_text(encoding="utf-8"))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-topic", type=int, default=1000)
    parser.add_argument("--growth", type=float, default=0.3)
    parser.add_argument("--sentences", type=int, default=240)
    args = parser.parse_args()
    topics(args.per_topic, args.growth)
    print()
    entities(args.sentences)
    print()
    sentiment()


if __name__ == "__main__":
    main()
