import subprocess
import sys

import pytest

from crawl_assets.registry import load_registry
from crawl_assets_tests.fakes import FAKE_X_BEARER


def run(*args, registry):
    return subprocess.run(
        [sys.executable, "-m", "crawl_assets.cli.main", "sources", *args, "--registry", str(registry)],
        capture_output=True, text=True, timeout=60,
    )


@pytest.fixture
def registry(tmp_path):
    return tmp_path / "sources.yaml"


def test_add_list_show_pause_resume_remove(registry):
    r = run("add", "--platform", "telegram", "--kind", "channel", "--identifier", "some_channel", "--name", "chan", "--tenant", "acme", "--credential", "acme_main", registry=registry)
    assert r.returncode == 0, r.stderr
    assert "acme.telegram.chan" in r.stdout
    r = run("add", "--platform", "x", "--kind", "search_query", "--identifier", "#ایران", "--name", "q", "--interval-minutes", "15", registry=registry)
    assert r.returncode == 0, r.stderr
    listed = run("list", registry=registry)
    assert listed.returncode == 0 and "acme.telegram.chan" in listed.stdout and "default.x.q" in listed.stdout
    assert run("pause", "acme.telegram.chan", "--reason", "rate limited by owner", registry=registry).returncode == 0
    shown = run("show", "chan", registry=registry)
    assert '"status": "paused"' in shown.stdout and "rate limited by owner" in shown.stdout
    assert run("resume", "chan", registry=registry).returncode == 0
    assert load_registry(registry).get("chan").status.value == "active"
    assert run("remove", "default.x.q", registry=registry).returncode == 0
    assert [e.key for e in load_registry(registry).entries] == ["acme.telegram.chan"]


def test_add_refuses_secret_with_exit_2_and_no_traceback(registry):
    r = run("add", "--platform", "x", "--kind", "search_query", "--identifier", "q", "--name", "q",
            "--credential", FAKE_X_BEARER, registry=registry)
    assert r.returncode == 2
    assert "field 'credential'" in r.stderr and "secret" in r.stderr
    assert "Traceback" not in r.stderr
    assert not registry.exists() or "AAAAAAAA" not in registry.read_text()


def test_add_duplicate_and_bad_slug(registry):
    args = ("add", "--platform", "x", "--kind", "search_query", "--identifier", "q", "--name", "q")
    assert run(*args, registry=registry).returncode == 0
    dup = run(*args, registry=registry)
    assert dup.returncode == 2 and "already exists" in dup.stderr
    bad = run("add", "--platform", "x", "--kind", "search_query", "--identifier", "q", "--name", "Bad/Name", registry=registry)
    assert bad.returncode == 2 and "field 'name'" in bad.stderr


def test_list_with_invalid_entry_exits_2_naming_file_entry_field(registry):
    registry.write_text("sources:\n  - name: ok\n    platform: x\n    kind: search_query\n    identifier: a\n"
                        "  - name: nope\n    platform: x\n    kind: galaxy\n    identifier: a\n")
    r = run("list", registry=registry)
    assert r.returncode == 2
    assert "default.x.ok" in r.stdout
    assert f"{registry}:8: entry 2 ('nope'): field 'kind'" in r.stderr


def test_unknown_source_is_a_clean_error(registry):
    r = run("show", "ghost", registry=registry)
    assert r.returncode == 2 and "no source 'ghost'" in r.stderr and "Traceback" not in r.stderr
