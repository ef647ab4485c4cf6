"""Networks and exports as files: GEXF valid against the GEXF 1.2 schema (``gexf_schema``), GraphML and GEXF
read back by networkx with their attributes, an edge list Gephi imports; JSON lines, CSV and Parquet with the
query that produced them, streamed in chunks."""

from __future__ import annotations

import csv
import io
import json
from xml.etree import ElementTree

from datetime import datetime
from zoneinfo import ZoneInfo

import networkx as nx
import orjson
import pyarrow.parquet as pq
import pytest

from crawl_assets.query.networks import CAUTION
from crawl_assets.persian.jalali import to_jalali
from crawl_assets_tests.api import gexf_schema
from crawl_assets_tests.api.conftest import auth
from crawl_assets_tests.api.corpus import RISING


@pytest.mark.parametrize("network", ["mention", "reply", "repost", "quote", "hashtag"])
def test_every_network_is_valid_gexf(demo, network: str) -> None:
    resp = demo(f"/v1/networks/{network}", format="gexf")
    assert resp.headers["content-type"].startswith("application/gexf+xml")
    doc = gexf_schema.validate(resp.content)
    assert CAUTION in doc.meta.description[0]
    edges = [edge for block in doc.graph.edges for edge in block.edge]
    assert edges, f"the {network} network of the demo data has edges"
    assert doc.graph.edges[0].count == len(edges) and doc.graph.nodes[0].count == len(doc.graph.nodes[0].node)
    read_back = nx.read_gexf(io.BytesIO(resp.content))
    assert read_back.number_of_edges() == len(edges) and read_back.number_of_nodes() == len(doc.graph.nodes[0].node)
    assert all(kind == network for _, _, kind in read_back.edges(data="kind"))


@pytest.mark.parametrize("break_it", [
    pytest.param(lambda root, ns: root.find("g:graph/g:edges/g:edge", ns).attrib.pop("source"), id="edge-without-source"),
    pytest.param(lambda root, ns: root.find("g:graph/g:edges/g:edge", ns).set("kind", "mention"), id="undeclared-attribute"),
    pytest.param(lambda root, ns: root.find("g:graph/g:edges/g:edge", ns).set("weight", "heavy"), id="weight-not-a-number"),
    pytest.param(lambda root, ns: root.find("g:graph", ns).set("defaultedgetype", "sideways"), id="unknown-edge-type"),
    pytest.param(lambda root, ns: root.find("g:meta", ns).append(ElementTree.Element(f"{{{gexf_schema.NS}}}mood")),
                 id="undeclared-element"),
    pytest.param(lambda root, ns: root.remove(root.find("g:graph", ns)), id="no-graph"),
])
def test_the_schema_check_fails_a_broken_network(demo, break_it) -> None:
    good = demo("/v1/networks/mention", format="gexf").content
    gexf_schema.validate(ElementTree.tostring(ElementTree.fromstring(good)))  # passes re-serialized unbroken
    root = ElementTree.fromstring(good)
    break_it(root, {"g": gexf_schema.NS})
    with pytest.raises(gexf_schema.InvalidGexf):
        gexf_schema.validate(ElementTree.tostring(root))


def test_a_mention_network_read_back_with_its_attributes(demo) -> None:
    graph = nx.read_gexf(io.BytesIO(demo("/v1/networks/mention", format="gexf", source="gen-a").content))
    assert graph.is_directed()
    b = graph.nodes["x:502"]
    assert b["label"] == "@analyst_b" and b["kind"] == "author" and b["platform"] == "x"
    assert graph.edges["x:503", "x:502"]["weight"] == 20, "reporter_c mentions analyst_b in 20 posts"
    graphml = nx.read_graphml(io.BytesIO(demo("/v1/networks/mention", format="graphml", source="gen-a").content))
    assert set(graphml.nodes) == set(graph.nodes) and graphml.edges["x:503", "x:502"]["weight"] == 20
    assert graphml.nodes["x:502"]["records"] == b["records"]


def test_a_reply_network_as_an_edge_list(demo) -> None:
    resp = demo("/v1/networks/reply", format="csv", source="gen-a")
    rows = list(csv.DictReader(io.StringIO(resp.text)))
    edges = {(r["Source"], r["Target"]) for r in rows}
    assert ("x:502", "x:501") in edges and ("x:503", "x:502") in edges
    assert all(r["Type"] == "Directed" and r["Kind"] == "reply" for r in rows)
    assert json.loads(resp.headers["X-Crawl-Query"])["filter"]["sources"] == ["gen-a"]


def test_hashtag_cooccurrence_is_undirected(demo) -> None:
    graph = nx.read_graphml(io.BytesIO(demo("/v1/networks/hashtag", format="graphml").content))
    assert not graph.is_directed() and graph.nodes[f"hashtag:{RISING}"]["kind"] == "hashtag"


def test_a_jsonl_export_records_its_query_and_matches_the_search(demo, world, api) -> None:
    params = {"hashtag": RISING, "source": "gen-a"}
    total = demo("/v1/search", size=1, **params)["total"]
    with api.stream("GET", "/v1/exports/records", params={**params, "format": "jsonl"}, headers=auth(world)) as resp:
        assert resp.status_code == 200
        lines = b"".join(resp.iter_bytes()).splitlines()
    header = orjson.loads(lines[0])["_export"]
    assert header["filter"] == {"sources": ["gen-a"], "hashtags": [RISING], "deleted": "exclude"}
    assert header["matched"] == header["records"] == total == len(lines) - 1
    rows = [orjson.loads(line) for line in lines[1:]]
    assert all(r["text_clean"] and r["lang"] == "fa" and RISING in r["hashtags"] for r in rows)
    assert [r["created_at"] for r in rows] == sorted(r["created_at"] for r in rows)


def test_csv_and_parquet_exports(demo) -> None:
    text = demo("/v1/exports/records", format="csv", source="gen-a", fields=["key", "text_clean", "lang", "hashtags"]).text
    assert text.startswith("\ufeff"), "a byte order mark: Excel reads the file as UTF-8"
    first, rest = text[1:].split("\n", 1)
    assert first.startswith("# crawl_assets export ") and json.loads(first[len("# crawl_assets export "):])["matched"] > 80
    rows = list(csv.DictReader(io.StringIO(rest)))
    assert list(rows[0]) == ["key", "text_clean", "lang", "hashtags"] and isinstance(json.loads(rows[0]["hashtags"]), list)
    table = pq.read_table(io.BytesIO(demo("/v1/exports/records", format="parquet", source="gen-a",
                                          fields=["key", "created_at", "hashtags", "metrics", "deleted"]).content))
    meta = json.loads(table.schema.metadata[b"crawl_assets.export"])
    assert meta["records"] == table.num_rows > 80 and meta["fields"] == ["key", "created_at", "hashtags", "metrics", "deleted"]
    assert str(table.schema.field("created_at").type) == "timestamp[ms, tz=UTC]"
    assert str(table.schema.field("hashtags").type) == "list<element: string>"
    limited = demo("/v1/exports/records", format="jsonl", limit=7).text.splitlines()
    assert len(limited) == 8 and orjson.loads(limited[0])["_export"]["truncated"] is True


def test_a_parquet_export_is_written_in_bounded_row_groups(demo, monkeypatch) -> None:
    """The encoder holds one row group at a time (bounded memory whatever the export's size): the file
    has several row groups, none larger than ROW_GROUP, and every record."""
    from crawl_assets.query import exports

    monkeypatch.setattr(exports, "PAGE", 40)
    monkeypatch.setattr(exports, "ROW_GROUP", 100)
    parquet = pq.ParquetFile(io.BytesIO(demo("/v1/exports/records", format="parquet", fields=["key", "text_clean"]).content))
    sizes = [parquet.metadata.row_group(i).num_rows for i in range(parquet.num_row_groups)]
    meta = json.loads(parquet.schema_arrow.metadata[b"crawl_assets.export"])
    assert sum(sizes) == meta["records"] > 300 and len(sizes) >= 3 and max(sizes) <= 100, sizes
    keys = parquet.read(columns=["key"]).column("key").to_pylist()
    assert len(set(keys)) == len(keys) == meta["records"]
    group = parquet.metadata.row_group(0)
    assert group.column(0).is_stats_set and not group.column(1).is_stats_set, "min/max for keys, none for free text"


def test_an_xlsx_export_with_jalali_dates_opens_with_text_digits_and_directions_intact(demo) -> None:
    import openpyxl

    resp = demo("/v1/exports/records", format="xlsx", source="gen-a", hashtag=RISING, calendar="jalali",
                fields=["key", "created_at", "text_clean", "hashtags"])
    assert resp.headers["content-disposition"].endswith('.xlsx"')
    book = openpyxl.load_workbook(io.BytesIO(resp.content), read_only=True)
    rows = list(book["records"].iter_rows(values_only=True))
    assert rows[0] == ("key", "created_at", "created_at_jalali", "text_clean", "hashtags")
    header = json.loads(next(book["export"].iter_rows(values_only=True))[0])
    assert header["records"] == len(rows) - 1 > 10 and header["calendar"] == "jalali"
    for key, created, jalali_date, text, tags in rows[1:]:
        assert RISING in json.loads(tags) and text.lstrip("\u200f")
        local = datetime.fromisoformat(created.replace("Z", "+00:00")).astimezone(ZoneInfo("Asia/Tehran"))
        assert jalali_date == f"{'%04d-%02d-%02d' % to_jalali(local.date())} {local:%H:%M:%S}"
    assert sum(r[2].startswith("1404-12-14 ") for r in rows[1:]) == 15, "2026-03-05 is 14 Esfand 1404"


def test_a_csv_export_without_the_byte_order_mark(demo) -> None:
    text = demo("/v1/exports/records", format="csv", source="gen-a", bom="false", fields=["key"]).text
    assert text.startswith("# crawl_assets export ")
