"""Bulk documents built straight from Arrow rows are the ones the dict path builds: the same source bytes, the
same ``_id``, month and external version; rows the fast path does not cover are handed back as dicts."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pyarrow as pa

from crawl_assets.index.documents import (Encoded, document_id, edge_documents, edge_id, fast_lines, instants,
                                         prepared_line, record_documents, source_bytes, with_lemmas)
from crawl_assets.index.naming import observation_version
from crawl_assets.lake.tables import EDGES_SCHEMA, arrow_to_records, records_to_arrow
from crawl_assets_tests.index.docs import record

TENANT = "acme"


def varied_records() -> list[dict[str, Any]]:
    rng = random.Random(7)
    docs = [record(i, TENANT, month=1 + i % 12, year=rng.choice([1999, 2024, 2026]), text=f"متن {i} & <b>")
            for i in range(60)]
    for i, doc in enumerate(docs):
        roll = i % 10
        if roll == 1:
            doc["edited_at"] = f"2026-03-0{1 + i % 9}T10:11:12.{i:06d}Z"  # fractions of a second
        elif roll == 2:
            doc.update(deleted=True, deleted_at="2026-04-01T00:00:00Z")
        elif roll == 3:
            doc["provenance"]["collected_at"] = None  # no collection time: the edit time alone
        elif roll == 4:
            doc["provenance"] = {"method": "api", "collected_at": "2026-05-01T00:00:00+03:30"}  # another offset
        elif roll == 5:
            doc["created_at"] = f"1969-12-31T23:59:5{i % 10}.500000Z"  # before the epoch, with a fraction
        elif roll == 6:
            doc["metadata"] = {"z": [1, 2.5, None, "é"], "a": {"superseded_by": None}}
        elif roll == 7:
            doc["provenance"] = None
        elif roll == 8:
            doc["collected_at"] = "2026-06-01T00:00:00Z"  # not a column: ignored alike
        elif roll == 9 and i % 20 == 9:
            doc.update(text=None, text_clean=None)  # no text: no text_lemma
        elif roll == 9:
            doc.update(text="الكتاب والكتب", text_clean=None, lang="ar")  # lemmas of text, Arabic stems
    return docs


def test_record_documents_are_the_dict_paths_byte_for_byte() -> None:
    table = records_to_arrow(varied_records())
    encoded = record_documents(table, TENANT)
    docs = list(arrow_to_records(table))
    assert encoded.slow == [] and all(encoded.fast)
    assert sum(b'"text_lemma":' in source for source in encoded.sources) == len(docs) - 3, "all but the textless"
    for i, doc in enumerate(docs):
        assert encoded.sources[i] == source_bytes(with_lemmas(doc)), doc["key"]
        assert encoded.ids[i] == document_id(doc, "records")
        assert encoded.versions[i] == observation_version(doc), doc["key"]
        assert encoded.routes[i] == doc["created_at"][:7]


def test_rows_the_fast_path_does_not_cover_come_back_as_dicts() -> None:
    docs = varied_records()[:6]
    docs[1]["tenant"] = "someone-else"  # the sink dead-letters it
    docs[2]["key"] = "x:" + "9" * 200  # longer than the fast path's bound: the sink checks it
    docs[3].update(created_at=None, edited_at=None, deleted_at=None, provenance=None)  # nothing to version by
    encoded = record_documents(records_to_arrow(docs), TENANT)
    assert encoded.fast == [True, False, False, False, True, True]
    assert [d["key"] for d in encoded.slow] == [docs[1]["key"], docs[2]["key"], docs[3]["key"]]
    assert encoded.slow == list(arrow_to_records(records_to_arrow(docs[1:4])))


def test_instants_format_as_python_does() -> None:
    table = records_to_arrow(varied_records())
    for name in ("created_at", "edited_at", "deleted_at"):
        want = [r[name] for r in arrow_to_records(table)]
        assert instants(table.column(name).combine_chunks()) == want


def test_edge_documents_carry_the_edge_and_their_records_version() -> None:
    rows = [("reply", "x:1", "x:0", "2026-01-02T03:04:05Z", "x", TENANT),
            ("hashtag", "x:1", "hashtag:خبر", "2026-01-02T03:04:05Z", "x", TENANT),
            ("mention", "x:2", "x:user:sara", None, "x", TENANT)]
    table = pa.table([pa.array(col) for col in zip(*rows)], schema=pa.schema(
        [pa.field(f.name, pa.string()) for f in EDGES_SCHEMA]).set(3, pa.field("created_at", pa.string())))
    table = table.set_column(3, "created_at", table.column("created_at").cast(EDGES_SCHEMA.field("created_at").type))
    encoded = edge_documents(table, [5, 5, 9])
    docs = [dict(zip(("type", "src", "dst", "created_at", "platform", "tenant"), row)) for row in rows]
    assert [orjson.loads(s) for s in encoded.sources] == docs
    assert encoded.ids == [edge_id(d) for d in docs]
    assert encoded.routes == ["2026-01", "2026-01", None] and encoded.versions == [5, 5, 9]


def test_fast_lines_are_prepared_line_of_each_fast_row() -> None:
    """The sink's lines of a batch are ``prepared_line`` of each fast row, in order (ids JSON-escaped, versions
    past 32 bits), with one action head asked for per route, in the order the fast rows meet them."""
    ids = ["x:1", 'quo"te', "back\\slash", "کتاب\u200cها", "ctl\x01\u2028", "x:6"]
    routes = ["2026-01", None, "2026-02", "2026-01", None, "2026-03"]
    versions = [0, 1, 2**62, 5, 7, 9]
    sources = [orjson.dumps({"n": i, "t": t}) for i, t in enumerate(ids)]
    fast = [True, True, False, True, True, True]
    asked: list[str | None] = []
    heads: dict = {}

    def head_of(route: str | None) -> bytes:
        asked.append(route)
        heads[route] = b'{"index":{"_index":%s,"_id":' % orjson.dumps(f"edges-{route}")
        return heads[route]

    lines = fast_lines(Encoded(ids, routes, versions, sources, fast, []), heads, head_of)
    assert asked == ["2026-01", None, "2026-03"]
    assert lines == [prepared_line(heads[r], i, v, s) for i, r, v, s, ok in zip(ids, routes, versions, sources, fast)
                     if ok]
    assert lines[1] == (b'{"index":{"_index":"edges-None","_id":"quo\\"te","version":1,"version_type":"external_gte"}}\n'
                        + sources[1] + b"\n")
    assert fast_lines(Encoded(ids, routes, versions, sources, [True] * 6, []), heads, head_of)[2].count(b"%d" % 2**62)


def _awkward_text(rng: random.Random) -> str | None:
    """A string of what orjson escapes (every control character, quotes, backslashes) or passes through (ZWNJ,
    U+2028, DEL, emoji), or None."""
    if rng.random() < 0.15:
        return None
    alphabet = [chr(c) for c in range(32)] + ['"', "\\", "\x7f", "\u2028", "\u200c", "کتاب", "😀", "a", " ", "/"]
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))


def test_sources_built_in_arrow_are_the_dict_paths_on_awkward_values() -> None:
    """``json_sources`` (column at a time in Arrow) gives ``dict_sources``' bytes whatever the values hold:
    escapes, nulls in every column, empty and null lists and null items, a sliced and a chunked batch, a
    ``text_lemma`` given or not, and a column type it does not rebuild (the whole batch then takes the dict path)."""
    from crawl_assets.index.documents import dict_sources, json_sources

    rng = random.Random(5)
    docs = varied_records()
    for i, doc in enumerate(docs):
        for name in ("key", "native_id", "author_handle", "text", "text_clean", "lang", "reply_to", "source"):
            doc[name] = _awkward_text(rng) if i % 3 else doc.get(name)
        doc["hashtags"] = [_awkward_text(rng) for _ in range(rng.randint(0, 3))]
        doc["mentions"] = [] if i % 2 else ["a\"b", "c\\d"]
        if i % 7 == 0:
            doc["metrics"] = None
    table = records_to_arrow(docs)
    table = table.set_column(table.schema.get_field_index("urls"), "urls",
                             pa.array([None if i % 5 == 0 else ["u", None] for i in range(len(docs))],
                                      pa.list_(pa.string())))
    table = table.set_column(table.schema.get_field_index("deleted"), "deleted",
                             pa.array([None if i % 4 == 0 else bool(i % 2) for i in range(len(docs))]))
    lemmas = [None if i % 4 == 1 else _awkward_text(rng) for i in range(len(docs))]
    texts = [" ".join(v if isinstance(v, str) else " ".join(x for x in v if isinstance(x, str))
                      for v in d.values() if isinstance(v, (str, list))) for d in docs]
    clean = sum(1 for text in texts if not any(c < " " and c not in "\n\r\t" for c in text))
    assert 0 < clean < len(docs), "rows of both paths"
    chunked = pa.concat_tables([table.slice(0, 17), table.slice(17)])
    for batch, given in ((table, lemmas), (table.slice(9, 30), lemmas[9:39]), (chunked, lemmas),
                         (table.select(["text", "urls", "deleted"]), lemmas), (table.slice(0, 0), []),
                         (table.append_column("n", pa.array(range(len(docs)))), lemmas)):
        got = json_sources(batch, given)
        assert got == dict_sources(batch, given)
        assert [orjson.loads(s).get("text_lemma") for s in got] == given


def test_edge_sources_built_in_arrow_are_orjsons_of_the_edge_dicts() -> None:
    """An edge's source is ``orjson.dumps`` of its fields in ``EDGE_FIELDS`` order, whatever its keys hold (and
    without ``text_lemma``); a table's other columns are left out."""
    from crawl_assets.index.documents import EDGE_FIELDS, dict_sources, json_sources

    rng = random.Random(9)
    rows = [{"type": rng.choice(["reply", "hashtag", "mention"]), "src": _awkward_text(rng) or "x:1",
             "dst": _awkward_text(rng) or "x:2", "created_at": rng.choice([None, "2026-01-02T03:04:05Z",
                                                                          "2026-01-02T03:04:05.250000Z"]),
             "platform": _awkward_text(rng), "tenant": TENANT} for _ in range(80)]
    table = pa.table({name: pa.array([r[name] for r in rows]) for name in EDGE_FIELDS})
    table = table.set_column(3, "created_at", table.column("created_at").cast(EDGES_SCHEMA.field("created_at").type))
    encoded = edge_documents(table.append_column("extra", pa.array(range(80))), [1] * 80)
    assert encoded.sources == [orjson.dumps(r) for r in rows]
    assert json_sources(table, None) == dict_sources(table, None) == encoded.sources
