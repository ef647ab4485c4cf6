"""Provenance coverage: every stored record and every indexed record says where (source, raw batch and
line), when (collected_at), how (method, format) and by which run it was collected: 100%, checked
against the lake and the Dagster instance. Edges carry it by reference: each starts at such a record."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq

from crawl_assets import settings
from crawl_assets.cli.demo import register_samples
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.registry import SourceEntry, update_registry
from crawl_assets_tests.es_node.inspect import sources
from crawl_assets_tests.standins.x_api import XAPIServer
from crawl_assets_tests.standins.x_corpus import build_corpus

FIELDS = ("collected_at", "method", "source", "format", "run_id", "raw_pointer", "raw_line")


def _missing(record: dict, lake_root: str, run_ids: set[str]) -> list[str]:
    prov = record.get("provenance") or {}
    out = [f for f in FIELDS if prov.get(f) in (None, "")]
    if prov.get("source") != record.get("source"):
        out.append("source differs from the record's")
    if prov.get("run_id") and prov["run_id"] not in run_ids:
        out.append("run_id is no run of the instance")
    pointer = str(prov.get("raw_pointer") or "")
    if pointer and not (pointer.startswith(lake_root) and Path(pointer).exists()):
        out.append("raw_pointer is not a raw batch of the lake")
    return out


def test_every_record_and_document_carries_its_provenance(dagster_home, monkeypatch, es_cluster):
    from crawl_assets.definitions import build_definitions

    monkeypatch.setenv("CRAWL_X_BEARER_TOKEN__DEMO", "test-token")
    for name, value in es_cluster.env().items():
        monkeypatch.setenv(name, value)
    with XAPIServer(build_corpus(300, days=5)) as x:
        monkeypatch.setenv("CRAWL_X_BASE_URL", x.url)
        keys = register_samples(settings.registry_path())
        live = SourceEntry(name="live", tenant="demo", platform="x", kind="account_timeline", identifier="data_eng")
        update_registry(settings.registry_path(), lambda reg: reg.add(live))
        with dg.DagsterInstance.get() as instance:
            defs = build_definitions()
            for key in [*keys, live.key]:
                platform = key.split(".")[1]
                instance.add_dynamic_partitions(f"{platform}_sources", [key])
                assert defs.resolve_job_def(f"{platform}_sync").execute_in_process(partition_key=key, instance=instance).success
            run_ids = {r.run_id for r in instance.get_runs()}
        records = sources(es_cluster.client, "crawl-records-*")
        edges = list(sources(es_cluster.client, "crawl-edges-*").values())

    lake = Lake(settings.lake_root())
    stored = []
    for path in lake.fs.glob(lake.path("tables/normalized_records/*/*/*/*.parquet")):
        with lake.fs.open(path, "rb") as fh:
            stored += list(arrow_to_records(pq.read_table(fh)))
    methods = {r["provenance"]["method"] for r in stored}
    assert len(stored) > 100 and methods == {"export", "api"}, "exports and a live API source are both covered"
    gaps = {r["key"]: m for r in stored if (m := _missing(r, lake.root, run_ids))}
    assert not gaps, f"{len(gaps)} of {len(stored)} stored records lack provenance, e.g. {list(gaps.items())[:3]}"

    assert len(records) == len({r["key"] for r in stored})
    doc_gaps = {k: m for k, d in records.items() if (m := _missing(d, lake.root, run_ids))}
    assert not doc_gaps, f"{len(doc_gaps)} of {len(records)} index documents lack provenance"
    assert edges and all(e["src"] in records for e in edges), "every edge starts at a record with provenance"
