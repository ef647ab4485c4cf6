"""One record with its history, one thread with parents across sources and what is missing marked."""

from __future__ import annotations


def test_an_x_edit_chain_comes_back_with_every_version(demo) -> None:
    latest = demo("/v1/records/x:9102")
    assert [v["key"] for v in latest["versions"]] == ["x:9101", "x:9102"] and latest["live_version"] == "x:9102"
    earlier = demo("/v1/records/x:9101")
    assert earlier["live_version"] == "x:9102" and earlier["record"]["metadata"]["superseded_by"] == "x:9102"
    assert latest["tombstone"]["deleted"] is False


def test_a_deleted_record_shows_its_tombstone(demo) -> None:
    gone = demo("/v1/records/x:9201")
    assert gone["tombstone"]["deleted"] is True and gone["tombstone"]["deleted_at"]
    demo("/v1/records/x:424242", expect=404)


def test_a_thread_in_order_with_the_root_from_another_source_and_a_missing_parent(demo) -> None:
    got = demo("/v1/threads/x:9003")
    assert got["conversation_id"] == "x:9001"
    shape = [(i["key"], i["depth"], i["missing"]) for i in got["items"]]
    assert shape == [("x:9001", 0, False), ("x:9002", 1, False), ("x:9003", 2, False),
                     ("x:9998", 0, True), ("x:9004", 1, False)], shape
    root = got["items"][0]["record"]
    assert root["source"] == "demo.x.gen-b" and got["items"][1]["record"]["source"] == "demo.x.gen-a"
    assert all(not i["key"].startswith("x:97") for i in got["items"]), "another tenant's replies never appear"
    quoted = demo("/v1/threads/x:9005")
    assert quoted["context"]["x:9001"]["missing"] is False


def test_a_rival_tenants_thread_marks_the_demo_parent_missing(demo) -> None:
    got = demo("/v1/threads/x:9700", tenant="rival")
    assert {i["key"] for i in got["items"] if i["missing"]} == {"x:9002"}
    assert all(i["record"] is None or i["record"]["tenant"] == "rival" for i in got["items"])
