"""Erasure and retention take the places, coordination and account type features with their subject: the
person's place rows, the groups and account rows naming them are gone, and the next run rebuilds the tenant's
tables without them."""

from __future__ import annotations

from datetime import timedelta

from crawl_assets.enrich import ENRICHERS, store
from crawl_assets.enrich.run import enrich_source
from crawl_assets.erasure.features import erase_feature_files
from crawl_assets.lake import Lake
from crawl_assets_tests.enrich.records import T0, batch_id, record, write_part

NAMES = ("places", "coordination", "account_types")


def _rows() -> list[dict]:
    rows = []
    for item in range(4):  # sara, ali and reza push the same link within seconds, four times
        for i, who in enumerate(("sara", "ali", "reza")):
            rows.append(record(f"x:{who}{item}", f"news from Tabriz {item}", author=who,
                               at=T0 + timedelta(days=item, seconds=5 * i), urls=[f"https://push.example/{item}"]))
    return rows


def _state(lake: Lake) -> tuple[set[str], list[list[str]], set[str]]:
    place_keys = set()
    for path in lake.fs.glob(lake.path("features/places/acme/**/*.parquet")):
        place_keys |= _keys(lake, path)
    groups = store.read_table(lake, store.tenant_path("coordination", "acme", "groups"))
    accounts = store.read_table(lake, store.tenant_path("account_types", "acme", "accounts"))
    return (place_keys, [] if groups is None else groups.column("accounts").to_pylist(),
            set() if accounts is None else set(accounts.column("author_id").to_pylist()))


def _keys(lake: Lake, path: str) -> set[str]:
    import pyarrow.parquet as pq

    with lake.fs.open(path, "rb") as fh:
        return set(pq.read_table(fh, columns=["key"]).column("key").to_pylist())


def _enrich(lake: Lake) -> None:
    for name in NAMES:
        assert not enrich_source(lake, ENRICHERS[name](), "acme", "x", "acme.x.main").failed


def test_erasure_removes_the_subject_from_places_groups_and_accounts(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    rows = _rows()
    write_part(lake, rows, batch_id(1))
    _enrich(lake)
    places, groups, accounts = _state(lake)
    assert "x:sara0" in places and groups == [["ali", "reza", "sara"]] and "sara" in accounts

    # the erasure rewrote the part without sara's records (a new batch id) and removed the old one
    lake.fs.rm(lake.path(lake.table_part("normalized_records", "acme", "x", "acme.x.main", batch_id(1))))
    write_part(lake, [r for r in rows if r["author_id"] != "sara"], batch_id(1) + "-eabc")
    erased = erase_feature_files(lake, "acme", {r["key"] for r in rows if r["author_id"] == "sara"})
    assert erased.parts_removed >= len(NAMES) and erased.tenant_tables_removed >= 2
    places, groups, accounts = _state(lake)
    assert places == set() and groups == [] and accounts == set(), "nothing of sara's is left before the rebuild"
    _enrich(lake)
    places, groups, accounts = _state(lake)
    assert not any(k.startswith("x:sara") for k in places) and places
    assert groups == [["ali", "reza"]] and accounts == {"ali", "reza"}


def test_retention_removing_a_part_removes_its_features_at_the_next_run(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    rows = _rows()
    write_part(lake, rows[:6], batch_id(1))  # the first two items
    write_part(lake, rows[6:], batch_id(2))
    _enrich(lake)
    assert _state(lake)[1] == [["ali", "reza", "sara"]]
    lake.fs.rm(lake.path(lake.table_part("normalized_records", "acme", "x", "acme.x.main", batch_id(1))))  # expired
    _enrich(lake)
    places, groups, accounts = _state(lake)
    assert places == {r["key"] for r in rows[6:]}, "the expired part's place rows are gone"
    assert groups == [], "two co-shared items are under min_repetitions: the group is no more"
    assert accounts == {"sara", "ali", "reza"}
