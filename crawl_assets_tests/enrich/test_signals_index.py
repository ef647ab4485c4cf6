"""Places, co-sharing groups and account type signals on the real node: counted by place, exported as GeoJSON,
joined to their records, the co-sharing network written as GEXF/GraphML, an account's signals in its author
profile; another tenant sees nothing."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from xml.etree import ElementTree

from crawl_assets.enrich import search_signals
from crawl_assets.enrich.config import ENRICHERS
from crawl_assets.enrich.index import index_features
from crawl_assets.enrich.run import enrich_source
from crawl_assets.query import graph_formats
from crawl_assets.query.profiles import author_profile
from crawl_assets.index.sink import index_documents
from crawl_assets.lake import Lake
from crawl_assets_tests.enrich.records import T0, batch_id, record, write_part
from crawl_assets_tests.index.conftest import EsTarget

NOW = datetime(2026, 4, 1, tzinfo=timezone.utc)
NAMES = ("places", "coordination", "account_types")


def _rows(tenant: str) -> list[dict]:
    src = f"{tenant}.x.main"
    rows = [record("x:p1", "باران شدید در تبریز", tenant=tenant, source=src, author="a"),
            record("x:p2", "Flooding in Tabriz and Tehran", tenant=tenant, source=src, author="b"),
            record("x:p3", "وصل الوفد إلى بغداد", tenant=tenant, source=src, author="c"),
            record("x:p4", "no place at all", tenant=tenant, source=src, author="c")]
    for item in range(4):  # three accounts pushing the same link within seconds, four times
        for i, who in enumerate(("bot1", "bot2", "bot3")):
            rows.append(record(f"x:c{item}{i}", f"look {item}", tenant=tenant, source=src, author=who,
                               author_handle=who, at=T0 + timedelta(days=item, seconds=5 * i),
                               urls=[f"https://push.example/{item}"]))
    return rows


def test_places_coordination_and_account_types_join(es: EsTarget, tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    src = f"{es.tenant}.x.main"
    rows = _rows(es.tenant)
    write_part(lake, rows, batch_id(1), tenant=es.tenant, source=src)
    index_documents(es.client, rows, family="records", tenant=es.tenant, deadletter_root=str(tmp_path / "lake"))
    for name in NAMES:
        enricher = ENRICHERS[name]()
        enrich_source(lake, enricher, es.tenant, "x", src, now=NOW)
        assert index_features(es.client, lake, enricher, es.tenant, "x", src).accounted
    es.client.indices.refresh(index="crawl-*")

    counts = {c["name"]: c for c in search_signals.place_counts(es.client, es.tenant)}
    assert counts["Tabriz"]["records"] == 2 and counts["Tehran"]["records"] == 1 and counts["Baghdad"]["records"] == 1
    assert counts["Tabriz"]["names"]["fa"] == "تبریز" and counts["Tabriz"]["country"] == "IR"
    assert [c["name"] for c in search_signals.place_counts(es.client, es.tenant, country="iq")] == ["Baghdad"]
    shape = search_signals.geojson(search_signals.place_counts(es.client, es.tenant))
    tabriz = next(f for f in shape["features"] if f["properties"]["name"] == "Tabriz")
    lon, lat = tabriz["geometry"]["coordinates"]
    assert shape["type"] == "FeatureCollection" and 45 < lon < 47 and 37 < lat < 39  # the city's own point
    keys = [r["key"] for r in search_signals.place_records(es.client, es.tenant, counts["Tabriz"]["place_id"])]
    assert keys == ["x:p1", "x:p2"]

    [group] = search_signals.coordination_groups(es.client, es.tenant)
    assert group["accounts"] == ["bot1", "bot2", "bot3"] and group["items"] == 4
    graph = search_signals.co_sharing_graph(es.client, es.tenant, group["group_id"])
    assert set(graph.nodes) == {"x:bot1", "x:bot2", "x:bot3"} and {e.weight for e in graph.edges.values()} == {4}
    query = {"network": "co_sharing", "tenant": es.tenant}
    gexf = b"".join(graph_formats.gexf(graph, query)).decode()
    assert gexf.count("<edge ") == 3 and "not evidence of coordination" in gexf
    graphml = ElementTree.fromstring(b"".join(graph_formats.graphml(graph, query)))
    assert len(graphml.findall(".//{http://graphml.graphdrawing.org/xmlns}node")) == 3

    signals = search_signals.account_types(es.client, es.tenant, "x", "bot1")
    assert signals["account_types"]["posts"] == 4 and signals["inferred"] is True
    profile = author_profile(es.client, es.tenant, "bot1")  # /v1/authors/bot1: the signals beside the activity
    assert profile["inferred"]["features"]["account_types"]["posts"] == 4
    assert profile["inferred"]["stamps"]["account_types"] == signals["enricher_version"]
    assert search_signals.place_counts(es.client, f"{es.tenant}b") == []
    assert search_signals.coordination_groups(es.client, f"{es.tenant}b") == []
    _through_the_api(es, tmp_path, counts["Tabriz"]["place_id"], group["group_id"])


def _through_the_api(es: EsTarget, tmp_path, tabriz: str, group_id: str) -> None:
    from fastapi.testclient import TestClient

    from crawl_assets.api.app import create_app
    from crawl_assets.api.access import KeyStore

    store = KeyStore(f"sqlite:///{tmp_path / 'keys.db'}", cache_seconds=0)
    headers = {"Authorization": f"Bearer {store.create(es.tenant, 'places test')[1]}"}
    other = {"Authorization": f"Bearer {store.create(f'{es.tenant}b', 'other tenant')[1]}"}
    with TestClient(create_app(es.client, store), raise_server_exceptions=False) as api:
        got = api.get("/v1/places", params={"kind": "city"}, headers=headers).json()
        assert [p["name"] for p in got["places"]][:1] == ["Tabriz"] and "never coordinates" in got["source"]
        shape = api.get("/v1/places.geojson", headers=headers)
        assert shape.headers["content-type"] == "application/geo+json" and len(shape.json()["features"]) == 3
        records = api.get(f"/v1/places/{tabriz}/records", headers=headers).json()["records"]
        assert [r["key"] for r in records] == ["x:p1", "x:p2"]
        assert api.get("/v1/places/city:1;drop/records", headers=headers).status_code == 400
        groups = api.get("/v1/coordination/groups", headers=headers).json()
        assert groups["groups"][0]["group_id"] == group_id and "not proof" in groups["caution"]
        graphml = api.get("/v1/coordination/network", params={"format": "graphml", "group": group_id}, headers=headers)
        assert graphml.status_code == 200 and graphml.text.count("<edge ") == 3
        assert api.get("/v1/places", headers=other).json()["places"] == []
        assert api.get("/v1/coordination/network", headers=other).text.count("<edge ") == 0
