"""Dataset releases (``crawl_assets.release``, ``crawl-assets release``): a query of a tenant's records frozen into a
package that verifies, reproduces byte for byte, imports elsewhere as the same records, and keeps erasures."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from crawl_assets import settings
from crawl_assets.cli.main import cli
from crawl_assets.query.filters import RecordFilter
from crawl_assets.lake import Lake
from crawl_assets.pipeline.reader import latest_records
from crawl_assets.release import PackageInvalid, ReleaseQuery, create_release, import_release, verify_package
from crawl_assets.release.build import ReleaseRefused
from crawl_assets.release.files import MANIFEST, write_manifest
from crawl_assets_tests.release.lake_data import make_lake

T1 = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)
T2 = datetime(2026, 5, 2, 9, 30, tzinfo=timezone.utc)


@pytest.fixture
def lake() -> Lake:
    return make_lake(Lake(settings.lake_root()))


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _release_root() -> Path:
    return settings.release_root() / "acme"


def test_round_trip_create_verify_import_gives_the_same_records(lake):
    summary = create_release(lake, ReleaseQuery("acme"), "first", now=T1)
    folder = summary.path
    assert folder == _release_root() / "first"
    assert verify_package(folder) == (summary.release_id, [])

    records = _jsonl(folder / "records.jsonl")
    assert sorted(r["key"] for r in records) == [f"telegram:777:{i}" for i in range(1, 5)]
    assert pq.read_table(folder / "records.parquet").num_rows == 4
    # X's terms: ids only, no text, no author
    ids = _jsonl(folder / "ids.jsonl")
    assert sorted(i["key"] for i in ids) == ["x:10", "x:11"] and set(ids[0]) == {"key", "platform", "native_id", "source"}
    assert b"an X post" not in b"".join(p.read_bytes() for p in folder.iterdir())
    # edges among the released records: replies between them, X's reply between two ids, no X hashtag
    edges = {(e["type"], e["src"], e["dst"]) for e in _jsonl(folder / "edges.jsonl")}
    assert {("reply", "telegram:777:2", "telegram:777:1"), ("reply", "x:11", "x:10")} <= edges
    assert not [e for e in edges if e[0] == "hashtag" and e[1].startswith("x:")]

    sheet = json.loads((folder / "datasheet.json").read_text())
    assert sheet["counts"]["per_platform"] == {"telegram": 4, "x": 2} and sheet["counts"]["ids_only"] == 2
    assert sheet["counts"]["per_month"] == {"2026-01": 4, "2026-03": 2}
    assert sheet["sources"]["acme.telegram.news"]["raw_batches"] == 1
    assert sheet["sources"]["acme.telegram.news"]["normalizer_versions"] != ["unknown"]
    assert sheet["terms"]["x"]["ids_only"] is True and sheet["created_at"] == "2026-05-01T12:00:00Z"
    package = json.loads((folder / "datapackage.json").read_text())
    assert {r["path"] for r in package["resources"]} >= {"records.parquet", "records.jsonl", "edges.parquet"}

    # another installation: its own lake, the package under the tenant's import root
    other = Lake(str(Path(settings.lake_root()).parent / "other-lake"))
    report = import_release(other, "lab", folder)
    assert report.records == 4 and report.ids_only == 2 and report.rejected == 0
    imported = {r["key"]: r for r in latest_records("lab", lake_root=other.root)}
    original = {r["key"]: r for r in latest_records("acme", platform="telegram")}
    assert imported.keys() == original.keys()
    for key, rec in imported.items():
        assert rec["tenant"] == "lab" and rec["source"] == f"lab.telegram.{summary.release_id}"
        assert rec["metadata"]["release"] == {"id": summary.release_id, "tenant": "acme", "source": "acme.telegram.news"}
        assert rec["provenance"] == original[key]["provenance"]
        same = {k for k in rec if k not in ("tenant", "source", "metadata")}
        assert {k: rec[k] for k in same} == {k: original[key][k] for k in same}
    with pytest.raises(PackageInvalid, match="imported into tenant 'lab' already"):
        import_release(other, "lab", folder)


def test_the_same_release_twice_differs_only_in_its_creation_time(lake):
    first = create_release(lake, ReleaseQuery("acme"), "a", now=T1).path
    second = create_release(lake, ReleaseQuery("acme"), "b", now=T2).path
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir())
    differ = [n for n in names if (first / n).read_bytes() != (second / n).read_bytes()]
    assert differ == ["datasheet.json", MANIFEST]
    one, two = (json.loads((f / "datasheet.json").read_text()) for f in (first, second))
    assert one.pop("created_at") != two.pop("created_at") and one == two
    m1, m2 = (json.loads((f / MANIFEST).read_text()) for f in (first, second))
    assert [e for e in m1["files"] if e["name"] != "datasheet.json"] == \
        [e for e in m2["files"] if e["name"] != "datasheet.json"]


def test_verify_names_each_file_that_differs(lake):
    folder = create_release(lake, ReleaseQuery("acme"), "v", now=T1).path
    data = bytearray((folder / "records.parquet").read_bytes())
    data[100] ^= 1
    (folder / "records.parquet").write_bytes(bytes(data))
    (folder / "edges.jsonl").write_bytes((folder / "edges.jsonl").read_bytes() + b"{}\n")
    (folder / "notes.txt").write_text("added")
    os.remove(folder / "ids.jsonl")
    _, problems = verify_package(folder)
    assert problems == ["'notes.txt': not in the manifest", "edges.jsonl: " + problems[1].split(": ", 1)[1],
                        "ids.jsonl: missing", "records.parquet: SHA-256 differs from the manifest's"]
    assert "bytes, the manifest says" in problems[1]
    result = CliRunner().invoke(cli, ["release", "verify", str(folder)])
    assert result.exit_code == 1 and "records.parquet: SHA-256 differs" in result.stderr

    (folder / MANIFEST).write_text('{"format": "crawl-assets-release/1", "release_id": "rel-00000000000000000000", '
                                   '"files": [{"name": "../../etc/passwd", "bytes": 1, "sha256": "' + "0" * 64 + '"}]}')
    with pytest.raises(PackageInvalid, match="bad file entry"):
        verify_package(folder)


def test_query_options_pick_the_records(lake):
    flt = RecordFilter(platforms=("telegram",), start=datetime(2026, 1, 6, tzinfo=timezone.utc),
                       end=datetime(2026, 1, 31, tzinfo=timezone.utc))
    folder = create_release(lake, ReleaseQuery("acme", flt), "window", now=T1).path
    assert sorted(r["key"] for r in _jsonl(folder / "records.jsonl")) == ["telegram:777:2", "telegram:777:3"]
    assert _jsonl(folder / "ids.jsonl") == []
    sheet = json.loads((folder / "datasheet.json").read_text())
    assert sheet["query"]["filter"]["start"] == "2026-01-06T00:00:00+00:00"

    result = CliRunner().invoke(cli, ["release", "create", "--tenant", "acme", "--out", "tagged", "--hashtag", "#news",
                                      "--dehydrate", "telegram"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    folder = Path(summary["path"])
    assert sorted(i["key"] for i in _jsonl(folder / "ids.jsonl")) == ["telegram:777:2", "x:10"]
    assert _jsonl(folder / "records.jsonl") == []


def test_out_stays_under_the_release_root_and_is_never_overwritten(lake):
    for out in ("../rival/x", "/tmp/elsewhere", ""):
        with pytest.raises(ReleaseRefused, match="is written under"):
            create_release(lake, ReleaseQuery("acme"), out)
    create_release(lake, ReleaseQuery("acme"), "once", now=T1)
    with pytest.raises(ReleaseRefused, match="exists"):
        create_release(lake, ReleaseQuery("acme"), "once", now=T1)
    with pytest.raises(ValueError, match="text query"):
        ReleaseQuery("acme", RecordFilter(q="news"))


def test_pseudonymized_authors_are_keyed_per_release_and_the_key_stays_out(lake, tmp_path, monkeypatch):
    with pytest.raises(ReleaseRefused, match="CRAWL_RELEASE_KEY_FILE"):
        create_release(lake, ReleaseQuery("acme", pseudonymize=True), "p0")
    key = b"k" * 40
    keyfile = tmp_path / "release.key"
    keyfile.write_bytes(key)
    keyfile.chmod(0o600)
    monkeypatch.setenv("CRAWL_RELEASE_KEY_FILE", str(keyfile))
    result = CliRunner().invoke(cli, ["release", "create", "--tenant", "acme", "--out", "p1", "--pseudonymize"])
    assert result.exit_code == 0, result.output
    folder = Path(json.loads(result.stdout)["path"])
    records = _jsonl(folder / "records.jsonl")
    authors = {r["author_id"] for r in records}
    assert len(authors) == 2 and all(a.startswith("anon-") for a in authors)
    assert not {r["author_handle"] for r in records} - {None}
    everything = b"".join(p.read_bytes() for p in folder.iterdir())
    assert key not in everything and b'"author_id":"501"' not in everything

    again = Path(json.loads(CliRunner().invoke(cli, ["release", "create", "--tenant", "acme", "--out", "p2",
                                                     "--pseudonymize"]).stdout)["path"])
    assert {r["author_id"] for r in _jsonl(again / "records.jsonl")} == authors  # same query and key: same ids
    other = Path(json.loads(CliRunner().invoke(cli, ["release", "create", "--tenant", "acme", "--out", "p3",
                                                     "--pseudonymize", "--platform", "telegram"]).stdout)["path"])
    assert not {r["author_id"] for r in _jsonl(other / "records.jsonl")} & authors  # another release: unlinkable


def test_a_bad_line_of_an_imported_package_is_quarantined_and_the_rest_goes_on(lake):
    folder = create_release(lake, ReleaseQuery("acme", RecordFilter(platforms=("telegram",))), "bad", now=T1).path
    lines = (folder / "records.jsonl").read_bytes().splitlines()
    broken = orjson.loads(lines[1])
    broken["created_at"] = "yesterday"
    tampered = [lines[0], orjson.dumps(broken), b"not json", lines[2], lines[3]]
    (folder / "records.jsonl").write_bytes(b"\n".join(tampered) + b"\n")
    os.remove(folder / MANIFEST)
    write_manifest(folder, json.loads((folder / "datasheet.json").read_text())["release_id"])  # a consistent forgery

    imports = settings.import_root() / "lab"
    imports.mkdir(parents=True)
    os.rename(folder, imports / "bad")
    result = CliRunner().invoke(cli, ["release", "import", "bad", "--tenant", "lab"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["records"] == 3 and report["rejected"] == 2
    [problem] = report["problems"]
    assert problem.startswith("records.jsonl line 3: not JSON: ")
    [quarantined] = report["quarantine"]
    [row] = [json.loads(line) for line in Path(quarantined.removeprefix("file://")).read_text().splitlines()]
    assert row["line"] == 2 and row["reason"].startswith("not a record: created_at")
    for name in ("records.jsonl", "datasheet.json"):  # a package without its records or datasheet: refused, named
        os.remove(imports / "bad" / name)
        os.remove(imports / "bad" / MANIFEST)
        write_manifest(imports / "bad", "rel-" + "0" * 20)
        refused = CliRunner().invoke(cli, ["release", "import", "bad", "--tenant", "lab"])
        assert refused.exit_code == 1 and f"the manifest lists no {name}" in refused.output
    outside = CliRunner().invoke(cli, ["release", "import", "../acme/x", "--tenant", "lab"])
    assert outside.exit_code == 2 and "is imported from under" in outside.output


def test_erase_lists_the_releases_holding_the_subject_and_new_ones_leave_it_out(lake):
    from crawl_assets.erasure import Selector, erase
    from crawl_assets.erasure.authors import Author

    holding = create_release(lake, ReleaseQuery("acme"), "before", now=T1)
    without = create_release(lake, ReleaseQuery("acme", RecordFilter(authors=("501",))), "only-501", now=T1)
    report = erase(lake, None, Selector(tenant="acme", author=Author("telegram", "43")), lock_wait_seconds=5)
    assert [r["release_id"] for r in report.releases] == [holding.release_id]
    assert report.releases[0]["path"] == str(holding.path) and without.release_id != holding.release_id
    [entry] = lake.read_erasure_log("acme")
    assert entry["releases"] == [holding.release_id] and "telegram:43" not in json.dumps(entry)

    after = create_release(lake, ReleaseQuery("acme"), "after", now=T2).path
    assert {r["author_id"] for r in _jsonl(after / "records.jsonl")} == {"501"}

    # an import into a tenant where the person was erased leaves them out too
    other = Lake(str(Path(settings.lake_root()).parent / "lake-b"))
    make_lake(other)
    erase(other, None, Selector(tenant="acme", author=Author("telegram", "501")), lock_wait_seconds=5)
    imported = import_release(other, "acme", holding.path)
    assert imported.left_out_erased == 2 and imported.records == 2


def test_a_person_in_the_erasure_log_is_left_out_even_if_a_row_remains(lake):
    from crawl_assets.erasure.log import erasure_key, subject_digest

    # an erasure whose lake step stopped half-way: logged, the person's rows still in the lake
    lake.append_erasure_log("acme", {"erasure_id": "half", "status": "lake step failed",
                                     "subject": subject_digest("acme", "telegram:43", erasure_key(lake))})
    summary = create_release(lake, ReleaseQuery("acme"), "after-half", now=T1)
    assert summary.excluded_erased == 2
    assert {r["author_id"] for r in _jsonl(summary.path / "records.jsonl")} == {"501"}
    sheet = json.loads((summary.path / "datasheet.json").read_text())
    assert sheet["erasure"] == {"erasures_before": 1, "records_left_out_as_erased": 2}


def test_the_datasheet_lists_the_gaps_collectors_wrote_and_the_quarantined_lines(lake):
    from crawl_assets_tests.enrich.records import batch_id

    lake.write_raw_batch(tenant="acme", platform="telegram", source="acme.telegram.news", batch_id=batch_id(2),
                         fmt="telegram", method="api", run_id="r2", lines=[],
                         extra={"gaps": ["messages 5-9 were not served"], "phase": "forward"})
    lake.write_quarantine("acme", "telegram", "acme.telegram.news", batch_id(2),
                          [{"name": "b", "line": 1, "reason": "bad item", "snippet": ""}])
    sheet = json.loads((create_release(lake, ReleaseQuery("acme"), "gaps", now=T1).path / "datasheet.json").read_text())
    news = sheet["sources"]["acme.telegram.news"]
    assert news["collector_gaps"] == [{"batch": batch_id(2), "gaps": ["messages 5-9 were not served"]}]
    assert news["rejected_lines"] == 1 and news["raw_batches"] == 2
