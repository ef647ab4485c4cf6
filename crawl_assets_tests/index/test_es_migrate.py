"""``es setup`` on indices an older template made: compatible changes are applied in place, the others
named; ``es reindex`` then moves each such index to a new generation while a sync keeps writing, and
no write is lost: every document ends with the newest version written."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crawl_assets.index.indices import count_documents, index_stats, setup_indices, tenant_indices
from crawl_assets.index.naming import index_name, read_alias, template_name, observation_version
from crawl_assets.index.outcomes import read_file
from crawl_assets.query.clauses import search_text
from crawl_assets.index.reindex import ReindexResult, reindex
from crawl_assets.index.sink import BulkSink, index_documents
from crawl_assets_tests.es_node.inspect import all_docs
from crawl_assets_tests.index.conftest import EsTarget
from crawl_assets_tests.index.docs import record

FAST = {"backoff_base_s": 0.05, "backoff_max_s": 0.5}
ZWNJ = "\u200c"


V2 = Path(__file__).with_name("templates") / "records_v2.json"  # the records template as version 2 shipped it


def older_template() -> dict:
    """The records template as version 1 shipped it: no ``joined`` sub-fields and analyzer, and two
    differences put-mapping can fix (a keyword field missing, ``urls`` with a lower ignore_above)."""
    body = json.loads(V2.read_text("utf-8"))
    analysis = body["template"]["settings"]["analysis"]
    del analysis["analyzer"]["persian_joined"], analysis["char_filter"]["zwnj_remove"]
    props = body["template"]["mappings"]["properties"]
    for name in ("text", "text_clean"):
        del props[name]["fields"]["joined"]
    del props["native_id"]
    props["urls"]["ignore_above"] = 1024
    body["version"] = 1
    return body


def put_older_template(es: EsTarget, body: dict | None = None) -> None:
    body = body or older_template()
    es.client.indices.put_index_template(name=template_name("records"), index_patterns=body["index_patterns"],
                                         template=body["template"], priority=body["priority"],
                                         version=body["version"])


def test_setup_applies_compatible_changes_and_names_the_rest(es: EsTarget, tmp_path: Path) -> None:
    put_older_template(es)
    index_documents(es.client, [record(i, es.tenant, month=1 + i % 2) for i in range(20)], family="records",
                    tenant=es.tenant, deadletter_root=str(tmp_path))
    months = [index_name("records", es.tenant, m) for m in ("2026.01", "2026.02")]

    planned = setup_indices(es.client, [es.tenant], dry_run=True)
    # A dry run changes nothing; it lists the differing fields and sees the analysis and _source differences
    # and the sub-fields the template no longer maps.
    dropped = [f"{f}.{sub}" for f in ("text", "text_clean") for sub in ("std", "en", "raw")]
    assert {(i.index, i.what) for i in planned.migration.needs_reindex} == {
        (m, w) for m in months for w in ("analysis", "_source", "text_lemma", *dropped)}
    assert len(planned.migration.updated) == 2 and "native_id" in planned.migration.updated[0]
    assert "text_lemma" in planned.migration.updated[0]
    report = setup_indices(es.client, [es.tenant])

    for name in months:
        mapping = es.client.indices.get_mapping(index=name)[name]["mappings"]["properties"]
        assert mapping["native_id"] == {"type": "keyword"}, "a missing field is added in place"
        assert mapping["urls"]["ignore_above"] == 2048, "an updatable parameter is updated"
        assert "joined" not in mapping["text_clean"]["fields"], "a sub-field needing a new analyzer is not"
    assert any(line.startswith(months[0] + ": ") and "native_id" in line for line in report.migration.updated)
    refused = {(i.index, i.what) for i in report.migration.needs_reindex}
    assert refused == {(m, w) for m in months
                       for w in ("text", "text_clean.joined", "analysis", "_source", "text_lemma", *dropped)}
    reasons = " ".join(i.reason for i in report.migration.needs_reindex)
    assert "persian_joined" in reasons and "zwnj_remove" in reasons and "text_lemma" in reasons
    again = setup_indices(es.client, [es.tenant])
    assert again.migration.updated == [] and {(i.index, i.what) for i in again.migration.needs_reindex} == refused


def test_reindex_switches_generations_while_a_sync_writes_and_loses_nothing(es: EsTarget, tmp_path: Path) -> None:
    put_older_template(es)
    lake = str(tmp_path / "lake")
    first = [record(i, es.tenant, month=1 + i % 2) for i in range(300)]
    index_documents(es.client, first, family="records", tenant=es.tenant, deadletter_root=lake)
    setup_indices(es.client, [es.tenant])  # the shipped template from now on
    logical = [index_name("records", es.tenant, m) for m in ("2026.01", "2026.02")]

    # A sync keeps writing while the reindex runs: edits of existing records (newer versions) and new ones.
    written: dict[str, int] = {}
    started, done, errors = threading.Event(), threading.Event(), []

    def sync() -> None:
        try:
            sink = BulkSink(es.client, family="records", tenant=es.tenant, deadletter_root=lake, batch_docs=25,
                            concurrency=2, **FAST)
            with sink:
                round_ = 0
                while not done.is_set() or round_ < 2:
                    round_ += 1
                    for i in range(0, 400, 7):
                        doc = record(i, es.tenant, month=1 + i % 2, text=f"ویرایش {round_} می‌خواهم",
                                     edited_at=f"2026-03-01T00:{round_ % 60:02d}:{round_ // 60:02d}Z")
                        written[doc["key"]] = observation_version(doc)
                        sink.add(doc)
                        if sink.stats.created + sink.stats.updated:
                            started.set()
            if sink.stats.failed or sink.stats.unaccounted:
                letters = read_file(lake, sink.stats.deadletter_path).letters if sink.stats.deadletter_path else []
                errors.append(f"sync: {sink.stats}; first refusal: {letters[0].reason if letters else None}")
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))

    writer = threading.Thread(target=sync)
    writer.start()
    assert started.wait(120), "the sync is writing before the reindex starts"
    try:
        results = [reindex(es.client, name, "records", es.tenant) for name in logical]
    finally:
        done.set()
        writer.join(timeout=300)
    assert not errors, errors

    assert [r.new_index for r in results] == [f"{name}.g2" for name in logical]
    assert all(r.removed == [f"{r.logical}.g1"] for r in results), "the clone of the original, once copied"
    docs = all_docs(es.client, read_alias("records", es.tenant))
    want = {d["key"]: observation_version(d) for d in first} | written
    assert {k: h.version for k, h in docs.items()} == want, "every document has the newest version written"
    assert {h.index for h in docs.values()} == {f"{name}.g2" for name in logical}
    for name in logical:
        mapping = es.client.indices.get_mapping(index=name)[f"{name}.g2"]["mappings"]["properties"]
        assert mapping["text_clean"]["fields"]["joined"]["analyzer"] == "persian_joined"
        aliases = es.client.indices.get_alias(index=f"{name}.g2")[f"{name}.g2"]["aliases"]
        assert set(aliases) == {name, read_alias("records", es.tenant), "crawl-records"}
        assert aliases[name]["is_write_index"] is True
    hits = es.client.search(index=read_alias("records", es.tenant), query={"match": {"text_clean.joined": "میخواهم"}})
    assert hits["hits"]["total"]["value"] == len(written), "the new sub-field is searchable"
    # text_lemma, kept out of _source, is filled in by the copy for every document (older ones included)
    lemma_hits = es.client.search(index=read_alias("records", es.tenant), query={"term": {"text_lemma": "خواستن"}},
                                  size=1)
    assert lemma_hits["hits"]["total"]["value"] == len(written), "edited records: lemma of می‌خواهم"
    older = es.client.search(index=read_alias("records", es.tenant), query={"term": {"text_lemma": "دنیا"}}, size=1)
    assert older["hits"]["total"]["value"] == len(want) - len(written), "records written before the new template"
    assert all("text_lemma" not in h.source for h in docs.values())

    # The rest of the index tooling reads generations back to their logical names.
    after = setup_indices(es.client, [es.tenant])
    assert after.migration.needs_reindex == [] and after.migration.in_progress == [] and after.aliases_added == []
    assert sorted(tenant_indices(es.client, "records", es.tenant)) == [f"{name}.g2" for name in logical]
    assert [r.month for r in index_stats(es.client, "records", es.tenant)] == ["2026.01", "2026.02"]
    assert count_documents(es.client, es.tenant) == len(want)
    # A second reindex moves on to the next generation; the write path keeps working.
    assert reindex(es.client, logical[0], "records", es.tenant).new_index == f"{logical[0]}.g3"
    stats = index_documents(es.client, [record(0, es.tenant, edited_at="2026-04-01T00:00:00Z")], family="records",
                            tenant=es.tenant, deadletter_root=lake)
    assert stats.updated == 1 and all_docs(es.client, logical[0])["x:1000"].index == f"{logical[0]}.g3"


def test_a_write_met_by_a_write_block_waits_for_it_instead_of_failing(es: EsTarget, tmp_path: Path) -> None:
    """What the sink does during a reindex's write block (the logical index being cloned): it waits for the
    block by time (``write_block_wait_s``), not by the rounds of the 429 budget, which a clone on a loaded
    cluster outlasted (13 documents of a sync dead-lettered mid-reindex)."""
    index_documents(es.client, [record(0, es.tenant)], family="records", tenant=es.tenant,
                    deadletter_root=str(tmp_path))
    name = index_name("records", es.tenant, "2026.01")
    es.client.indices.add_block(index=name, block="write")
    sink = BulkSink(es.client, family="records", tenant=es.tenant, deadletter_root=str(tmp_path),
                    max_item_retries=0, **FAST)  # no round of 429 retries at all
    sink.add_many([record(i, es.tenant, edited_at="2026-02-01T00:00:00Z") for i in range(3)])
    closer = threading.Thread(target=sink.close)
    closer.start()
    deadline = time.monotonic() + 120  # a bound on waiting, not an assertion
    while sink.stats.retried < 3 * 4 and not sink.stats.failed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sink.stats.failed == 0 and sink.stats.retried >= 3 * 4, "the writes met the block round after round"
    es.client.indices.put_settings(index=name, settings={"index.blocks.write": False})
    closer.join(120)
    assert (sink.stats.created, sink.stats.updated, sink.stats.failed) == (2, 1, 0)


def test_a_write_block_that_outlasts_the_wait_is_dead_lettered_with_the_block_as_reason(
        es: EsTarget, tmp_path: Path) -> None:
    """A block nobody lifts (a crashed reindex) does not hang the sink: once ``write_block_wait_s`` is spent the
    documents are dead-lettered naming the block, not as 429 rejections, so the operator knows what to fix."""
    index_documents(es.client, [record(0, es.tenant)], family="records", tenant=es.tenant,
                    deadletter_root=str(tmp_path))
    name = index_name("records", es.tenant, "2026.01")
    es.client.indices.add_block(index=name, block="write")
    stats = index_documents(es.client, [record(i, es.tenant, edited_at="2026-02-01T00:00:00Z") for i in range(3)],
                            family="records", tenant=es.tenant, deadletter_root=str(tmp_path),
                            write_block_wait_s=0, **FAST)
    assert (stats.created, stats.updated, stats.failed, stats.unaccounted) == (0, 0, 3, 0)
    letters = read_file(str(tmp_path), stats.deadletter_path).letters  # type: ignore[arg-type]
    assert sorted(letter.id or "" for letter in letters) == ["x:1000", "x:1001", "x:1002"]
    for letter in letters:
        assert (letter.reason["status"], letter.reason["type"]) == (403, "cluster_block_exception")
        assert "index write" in letter.reason["reason"] and name in letter.reason["reason"]


def reindex_while_searching(es: EsTarget, name: str, found: Callable[[], Any]) -> tuple[ReindexResult, list[Any]]:
    """``es reindex`` of a records index while another thread keeps searching: (its result, every answer)."""
    answers, done = [], threading.Event()

    def search_meanwhile() -> None:
        while not done.is_set():
            answers.append(found())

    reader = threading.Thread(target=search_meanwhile)
    reader.start()
    try:
        result = reindex(es.client, name, "records", es.tenant)
    finally:
        done.set()
        reader.join(60)
    return result, answers


def test_indices_of_template_2_move_to_one_analyzed_text_copy_while_search_keeps_answering(
        es: EsTarget, tmp_path: Path) -> None:
    """Template 3 indexes the text once (``text_clean`` and its ZWNJ-joined form; ``text`` kept as observed, not
    indexed). ``es setup`` names what an index of template 2 maps beyond that, ``es reindex`` moves it to a new
    generation, and the Persian search (which reads ``text_clean``) answers the same before, during and after."""
    put_older_template(es, json.loads(V2.read_text("utf-8")))
    texts = [f"دانش{ZWNJ}آموزی تازه", "دانشآموزي تازه", "دانش آموزی تازه", "hello world"]
    index_documents(es.client, [record(i, es.tenant, text=t) for i, t in enumerate(texts)], family="records",
                    tenant=es.tenant, deadletter_root=str(tmp_path))
    name = index_name("records", es.tenant, "2026.01")

    def found() -> list[list[str]]:
        return [sorted(d["key"] for d in search_text(es.client, es.tenant, q)) for q in ("دانشآموزی", "آموزی", "hello")]

    before = found()
    assert before == [["x:1000", "x:1001"], ["x:1000", "x:1002"], ["x:1003"]]
    report = setup_indices(es.client, [es.tenant])
    dropped = {f"{f}.{sub}" for f in ("text", "text_clean") for sub in ("std", "en", "raw")} | {"text.joined"}
    assert {i.what for i in report.migration.needs_reindex if i.index == name} == {"text", "_source", "text_lemma",
                                                                                  *dropped}
    assert found() == before, "the old generation answers the new queries"

    result, answers = reindex_while_searching(es, name, found)
    assert answers and [a for a in answers if a != before] == [], "no search went unanswered or changed during the move"
    mapping = es.client.indices.get_mapping(index=name)[result.new_index]["mappings"]["properties"]
    assert mapping["text"] == {"type": "text", "index": False}
    assert set(mapping["text_clean"]["fields"]) == {"joined"}
    assert found() == before
    assert setup_indices(es.client, [es.tenant]).migration.needs_reindex == []


V3 = Path(__file__).with_name("templates") / "records_v3.json"  # the records template as version 3 shipped it


def test_indices_of_template_3_gain_word_forms_by_reindex_while_search_keeps_answering(
        es: EsTarget, tmp_path: Path) -> None:
    """Template 4 adds ``text_lemma``, indexed and kept out of ``_source``. On an index of template 3, ``es setup``
    maps it in place and names the ``_source`` difference; ``es reindex`` computes it for every document it copies,
    and the search finds every form of a word from then on, without missing what it found before meanwhile."""
    from crawl_assets.query.filters import RecordFilter
    from crawl_assets.api.pages import search_page

    put_older_template(es, json.loads(V3.read_text("utf-8")))
    texts = ["کتاب تازه", f"کتاب{ZWNJ}هایمان را آوردیم", "کتابهای قدیمی", "باران آمد"]
    index_documents(es.client, [record(i, es.tenant, text=t) for i, t in enumerate(texts)], family="records",
                    tenant=es.tenant, deadletter_root=str(tmp_path))
    name = index_name("records", es.tenant, "2026.01")

    def found() -> set[str]:
        return {r["key"] for r in search_page(es.client, es.tenant, RecordFilter(q="کتاب"), size=10).records}

    before = found()
    assert before == {"x:1000", "x:1001"}, "template 3 finds the exact word only"
    report = setup_indices(es.client, [es.tenant])
    assert {i.what for i in report.migration.needs_reindex if i.index == name} == {"_source", "text_lemma"}
    assert any(line.startswith(name + ": ") and "text_lemma" in line for line in report.migration.updated)

    result, answers = reindex_while_searching(es, name, found)
    assert answers and all(before <= a for a in answers), "no search lost a record during the move"
    assert found() == {"x:1000", "x:1001", "x:1002"}, "کتابهای is a form of کتاب; باران is not"
    assert es.client.get(index=result.new_index, id="x:1002")["_source"].get("text_lemma") is None, "not stored"
    assert setup_indices(es.client, [es.tenant]).migration.needs_reindex == []


def test_an_index_whose_lemmas_another_lemmatizer_made_is_named_for_a_reindex_that_recomputes_them(
        es: EsTarget, tmp_path: Path) -> None:
    """A lemmatizer change (its declared ``LEMMA_VERSION``) leaves documents with the old ``text_lemma``: ``es setup``
    names the index, and ``es reindex`` recomputes every lemma and stamps the new generation."""
    from crawl_assets.index.documents import LEMMA_META
    from crawl_assets.persian.lemma import LEMMA_VERSION

    setup_indices(es.client, [es.tenant])
    index_documents(es.client, [record(0, es.tenant, text="کتابهایمان")], family="records", tenant=es.tenant,
                    deadletter_root=str(tmp_path))
    name = index_name("records", es.tenant, "2026.01")
    assert es.client.indices.get_mapping(index=name)[name]["mappings"]["_meta"] == {LEMMA_META: LEMMA_VERSION}
    assert setup_indices(es.client, [es.tenant]).migration.needs_reindex == []
    es.client.indices.put_mapping(index=name, meta={LEMMA_META: "2000.1.1"})  # as an older lemmatizer left it
    named = [i for i in setup_indices(es.client, [es.tenant]).migration.needs_reindex if i.index == name]
    assert [(i.what, "2000.1.1" in i.reason and LEMMA_VERSION in i.reason) for i in named] == [("text_lemma", True)]
    result = reindex(es.client, name, "records", es.tenant)
    meta = es.client.indices.get_mapping(index=result.new_index)[result.new_index]["mappings"]["_meta"]
    assert meta == {LEMMA_META: LEMMA_VERSION}
    assert setup_indices(es.client, [es.tenant]).migration.needs_reindex == []
