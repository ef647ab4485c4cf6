"""``crawl-assets es setup|replay|stats`` end to end against the test server (or a real cluster)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawl_assets.cli.main import cli
from crawl_assets.index.outcomes import pending_files
from crawl_assets.index.naming import index_name
from crawl_assets.index.sink import index_documents
from crawl_assets_tests.index.conftest import EsTarget
from crawl_assets_tests.index.docs import record


@pytest.fixture
def run_cli(es: EsTarget, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CRAWL_ES_URL", es.url)
    for name in ("API_KEY", "USERNAME", "PASSWORD", "CA_CERTS"):
        if os.environ.get(f"CRAWL_TEST_ES_{name}"):
            monkeypatch.setenv(f"CRAWL_ES_{name}", os.environ[f"CRAWL_TEST_ES_{name}"])

    def invoke(*args: str):
        return CliRunner().invoke(cli, ["es", *args], catch_exceptions=False)

    return invoke


def test_setup_with_retention_and_stats(es: EsTarget, run_cli, tmp_path: Path) -> None:
    docs = [record(i, es.tenant, year=2020, month=1 + i) for i in range(3)]
    docs.append(record(9, es.tenant, deleted=True, deleted_at="2026-01-01T00:00:00Z"))
    index_documents(es.client, docs, family="records", tenant=es.tenant, deadletter_root=str(tmp_path))

    dry = run_cli("setup", "--tenant", es.tenant, "--retention", f"{es.tenant}=12", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert f"would delete (retention): {index_name('records', es.tenant, '2020.01')}" in dry.output

    done = run_cli("setup", "--tenant", es.tenant, "--retention", f"{es.tenant}=12")
    assert done.exit_code == 0, done.output
    assert done.output.count("delete (retention)") == 3

    out = run_cli("stats", "--tenant", es.tenant)
    assert out.exit_code == 0, out.output
    line = next(li for li in out.output.splitlines() if li.startswith(index_name("records", es.tenant, "2026.01")))
    assert line.split()[1:3] == ["1", "1"]  # one document, a tombstone
    assert "1 indices, 1 documents; 0 pending dead-letter file(s)" in out.output


def test_replay_command(es: EsTarget, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lake = str(tmp_path / "lake")
    monkeypatch.setenv("CRAWL_LAKE", lake)
    docs = [record(i, es.tenant) for i in range(4)]
    docs[1]["edited_at"] = "not a date"
    index_documents(es.client, docs, family="records", tenant=es.tenant, deadletter_root=lake)
    assert len(pending_files(lake)) == 1

    again = run_cli("replay")
    assert again.exit_code == 1 and "1 replayed, 0 created, 0 updated, 0 no-op, 1 failed again" in again.output

    (path,) = pending_files(lake)
    with open(path, "rb") as fh:
        fixed = fh.read().replace(b'"edited_at":"not a date"', b'"edited_at":null')
    with open(path, "wb") as fh:
        fh.write(fixed)
    ok = run_cli("replay", "--tenant", es.tenant)
    assert ok.exit_code == 0 and "1 created" in ok.output
    assert pending_files(lake) == []
    assert run_cli("replay").output.strip() == "no pending dead letters"


def test_unreachable_cluster_is_a_one_line_error(run_cli) -> None:
    result = CliRunner().invoke(cli, ["es", "stats", "--url", "http://127.0.0.1:9"])
    assert result.exit_code == 2
    assert "cannot reach Elasticsearch at http://127.0.0.1:9" in result.output and "Traceback" not in result.output
    refused = CliRunner().invoke(cli, ["es", "stats", "--url", "http://user:secret@127.0.0.1:9"])  # issue 15
    assert refused.exit_code == 2 and "CRAWL_ES_PASSWORD" in refused.output
    assert "secret" not in refused.output and "Traceback" not in refused.output


def test_bad_retention_value(run_cli) -> None:
    result = CliRunner().invoke(cli, ["es", "setup", "--retention", "acme=0"])
    assert result.exit_code == 2 and "expected TENANT=MONTHS" in result.output


def test_setup_defaults_to_the_registry_tenants(es: EsTarget, run_cli, tmp_path: Path, monkeypatch) -> None:
    registry = tmp_path / "sources.yaml"
    registry.write_text(f"sources:\n- name: chan\n  tenant: {es.tenant}\n  platform: telegram\n  kind: channel\n"
                        f"  identifier: durov\n")
    result = run_cli("setup", "--registry", str(registry), "--dry-run")
    assert result.exit_code == 0, result.output
    assert f"tenants: {es.tenant}" in result.output
    empty = run_cli("setup", "--registry", str(tmp_path / "missing.yaml"), "--dry-run")
    assert empty.exit_code == 0 and "tenants: default" in empty.output


def test_setup_names_what_needs_a_reindex_and_reindex_does_it(es: EsTarget, run_cli, tmp_path: Path) -> None:
    from crawl_assets_tests.index.test_es_migrate import put_older_template

    put_older_template(es)  # indices made by an older version of the template
    index_documents(es.client, [record(i, es.tenant) for i in range(5)], family="records", tenant=es.tenant,
                    deadletter_root=str(tmp_path))
    name = index_name("records", es.tenant, "2026.01")

    setup = run_cli("setup", "--tenant", es.tenant)
    assert setup.exit_code == 0, setup.output
    assert f"update mapping in place: {name}: native_id" in setup.output
    assert f"needs reindex: {name}: text_clean.joined: " in setup.output
    assert f"-> crawl-assets es reindex --tenant {es.tenant} --family records" in setup.output

    done = run_cli("reindex", "--tenant", es.tenant)
    assert done.exit_code == 0, done.output
    assert f"{name}: now {name}.g2; 5 copied, 0 newer kept, removed {name}.g1" in done.output
    assert "needs reindex" not in run_cli("setup", "--tenant", es.tenant).output
    assert run_cli("reindex", "--tenant", es.tenant).output.strip() == "nothing needs a reindex"
    bad = run_cli("reindex", "--tenant", es.tenant, "--index", "crawl-records-someone-2026.01")
    assert bad.exit_code == 2 and "is not a records index of tenant" in bad.output
