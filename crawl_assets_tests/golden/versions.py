"""Output digests behind the declared versions: the normalizer's records and edges for every seed of every
format, the lemmatizer's lemmas of the Persian search evaluation's words, and each enricher's rows on the bundled samples' records. ``versions.json`` pairs each declared version with the
digest of what it produces; a changed output under an unchanged version is a missed bump.

usage (from the repository root, after bumping a version on purpose)::

    python -m crawl_assets_tests.golden.versions --update
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa

FILE = Path(__file__).with_name("versions.json")
CONTEXT_ARGS = {"tenant": "t", "source": "t.golden.seeds", "method": "api", "run_id": "golden"}
GENERATED_AT = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _canonical(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)


def normalized() -> dict[str, str]:
    """Per seed set, the digest of its records, rejections and edges."""
    from crawl_assets.normalize import NormalizeContext, normalize_stream
    from crawl_assets.normalize.edges import document_edges
    from crawl_assets.schema import Record
    from crawl_assets_tests.fuzz.seeds import seeds

    context = NormalizeContext(**CONTEXT_ARGS)
    digests = {}
    for name, spec in sorted(seeds().items()):
        payload = spec.encode(list(spec.items))
        digest = hashlib.sha256()
        for item in normalize_stream(spec.fmt or name, io.BytesIO(payload), name=name, context=context):
            dumped = item.model_dump(mode="json")
            digest.update(_canonical(dumped) + b"\n")
            if isinstance(item, Record):
                for edge in document_edges(dumped):
                    digest.update(_canonical(list(edge)) + b"\n")
        digests[name] = digest.hexdigest()
    return digests


SAMPLES = {"x-v2": "x_v2_recording.jsonl", "telegram-export": "telegram_export/result.json",
           "x-archive": "x_archive_tweets.js"}


def sample_records() -> list[dict[str, Any]]:
    """The records of the bundled samples: the enrichers' fixed input (seeds added for the normalizer leave
    it unchanged, so an enricher's digest moves only with the enricher)."""
    from importlib import resources

    from crawl_assets.normalize import NormalizeContext, normalize_stream
    from crawl_assets.schema import Record

    context = NormalizeContext(**CONTEXT_ARGS)
    records = []
    for fmt, relative in SAMPLES.items():
        payload = (resources.files("crawl_assets") / "sample_data" / relative).read_bytes()
        records += [item.model_dump(mode="json") for item in
                    normalize_stream(fmt, io.BytesIO(payload), name=relative, context=context) if isinstance(item, Record)]
    return records


def _table_digest(table: pa.Table) -> str:
    from crawl_assets.enrich.base import STAMP_NAMES

    rows = table.drop_columns([c for c in table.column_names if c in STAMP_NAMES]).to_pylist()
    return hashlib.sha256(b"\n".join(_canonical(_rounded(r)) for r in rows)).hexdigest()


def _rounded(value: Any) -> Any:
    """Floats to 6 significant digits: another BLAS or CPU may move a model's last bits, never its output."""
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def enriched(records: list[dict[str, Any]]) -> dict[str, str]:
    """Per enricher at its defaults, the digest of its rows on ``records`` (stamp columns left out)."""
    from crawl_assets.enrich import CombineContext
    from crawl_assets.enrich.config import ENRICHERS, build
    from crawl_assets.lake.tables import records_to_arrow

    table = records_to_arrow(records)
    out = {}
    for name in sorted(ENRICHERS):
        enricher = build(name)
        rows = enricher.extract(table.select(list(enricher.columns)) if enricher.columns else table)
        parts = {"part": _table_digest(rows)}
        if enricher.scope == "tenant":
            for table_name, combined in sorted(enricher.combine([rows], CombineContext("t", GENERATED_AT)).items()):
                parts[table_name] = _table_digest(combined)
        out[name] = hashlib.sha256(_canonical(parts)).hexdigest()
    return out


LEMMA_WORDS = ("pairs.tsv", "must_not.tsv")  # bench/persian_search: the word forms and look-alikes we wrote


def lemmatized() -> str:
    """The digest of the lemmatizer's answers on every word of the Persian search evaluation's pairs."""
    from crawl_assets.persian.lemma import lemma

    digest = hashlib.sha256()
    for name in LEMMA_WORDS:
        lines = FILE.parents[2].joinpath("bench", "persian_search", name).read_text("utf-8").splitlines()[1:]
        for word in sorted({w for line in lines for w in line.split("\t")[1:]}):
            digest.update(f"{word}\t{lemma(word)}\t{lemma(word, 'ar')}\n".encode())
    return digest.hexdigest()


def current() -> dict[str, Any]:
    """Declared versions beside the digests of today's outputs."""
    from crawl_assets.enrich.config import ENRICHERS
    from crawl_assets.persian.lemma import LEMMA_VERSION
    from crawl_assets.pipeline.version import NORMALIZER_VERSION

    formats = normalized()
    digests = enriched(sample_records())
    return {"normalizer": {"version": NORMALIZER_VERSION, "outputs": formats},
            "lemmatizer": {"version": LEMMA_VERSION, "output": lemmatized()},
            "enrichers": {name: {"version": ENRICHERS[name].version, "output": digests[name]}
                          for name in sorted(ENRICHERS)}}


def recorded() -> dict[str, Any]:
    return json.loads(FILE.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help=f"write today's versions and digests to {FILE.name}")
    args = parser.parse_args()
    now = current()
    if args.update:
        FILE.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
    print(json.dumps(now, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
