"""Topics and entities pin their output on planted records to their declared version (the normalizer's seeds of
``crawl_assets_tests/golden/versions.json`` hold little text to fit topics or find entities in): an output that
changes while ``version`` stays fails here, and so does a bumped ``version`` whose golden was not rewritten. After a deliberate change: bump ``version``, then
``CRAWL_UPDATE_GOLDEN=1 python -m pytest crawl_assets_tests/enrich/test_golden.py`` and commit the file."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from crawl_assets.enrich import ENRICHERS
from crawl_assets.enrich.base import STAMP_NAMES, CombineContext
from crawl_assets_tests.enrich.planted import entity_sentences, topic_records
from crawl_assets_tests.enrich.records import record, table

GOLDEN = Path(__file__).parent / "golden" / "enrichers.json"
NOW = CombineContext("acme", datetime(2026, 4, 1, tzinfo=timezone.utc))


def _rows(t: pa.Table, digits: int) -> list[dict[str, Any]]:
    """Rows without the stamp columns, floats rounded (BLAS may differ in the last bits)."""
    def fix(value: Any) -> Any:
        if isinstance(value, float):
            return round(value, digits)
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        return value
    return [fix({k: v for k, v in row.items() if k not in STAMP_NAMES}) for row in t.to_pylist()]


def _topics() -> Any:
    enricher = ENRICHERS["topics"](topics=9)
    rows, _ = topic_records(12)
    out = enricher.combine([enricher.extract(table(rows))], NOW)
    return {name: _rows(t, 2) for name, t in sorted(out.items()) if name != "model"}


def _entities() -> Any:
    enricher = ENRICHERS["entities"]()
    rows = [record(f"x:{i}", text) for i, (_, text, _) in enumerate(entity_sentences(12))]
    return _rows(enricher.extract(table(rows)), 4)


OUTPUTS = {"topics": _topics, "entities": _entities}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_output_is_pinned_to_the_declared_version(name):
    version, digest = ENRICHERS[name].version, _digest(OUTPUTS[name]())
    pinned = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
    if os.environ.get("CRAWL_UPDATE_GOLDEN"):
        pinned[name] = {"version": version, "digest": digest}
        GOLDEN.write_text(json.dumps(pinned, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert name in pinned, f"no golden for {name}: run with CRAWL_UPDATE_GOLDEN=1 and commit {GOLDEN.name}"
    assert pinned[name]["version"] == version, \
        f"{name}: version {version} has no golden (was {pinned[name]['version']}): CRAWL_UPDATE_GOLDEN=1, deliberately"
    assert pinned[name]["digest"] == digest, \
        f"{name}'s output changed while its version stayed {version}: bump the version, then update the golden"
