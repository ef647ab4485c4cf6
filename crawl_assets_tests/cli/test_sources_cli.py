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


def test_add_refuses_what_would_certainly_fail(registry):
    from crawl_assets.cli.demo import sample_file
    from crawl_assets.sdk.exports import tenant_import_root

    (imports := tenant_import_root("default")).mkdir(parents=True)
    archive = imports / "tweets.js"
    archive.write_bytes(sample_file("x_archive_tweets.js").read_bytes())
    base = ("add", "--platform", "x", "--kind", "export_file", "--name", "arch")
    missing = run(*base, "--identifier", "nope.js", "--option", "format=x-archive", registry=registry)
    assert missing.returncode == 2 and "field 'identifier': export file not found" in missing.stderr
    assert str(imports / "nope.js") in missing.stderr
    # no format: X's default (x-v2, an API recording) cannot read an account archive; the error says what can
    no_format = run(*base, "--identifier", str(archive), registry=registry)
    assert no_format.returncode == 2 and "field 'options.format'" in no_format.stderr
    assert "does not read as x-v2 (the default, none was named)" in no_format.stderr
    assert "add --option format=x-archive" in no_format.stderr
    wrong = imports / "notes.txt"
    wrong.write_text("just some notes\nnot an export\n")
    neither = run(*base, "--identifier", str(wrong), "--option", "format=x-archive", registry=registry)
    assert neither.returncode == 2 and "x export formats: x-v2, x-archive" in neither.stderr
    typo = run("add", "--platform", "x", "--kind", "search_query", "--identifier", "q", "--name", "q",
               "--option", "max_result=10", registry=registry)
    assert typo.returncode == 2 and "unknown option 'max_result'" in typo.stderr and "max_results" in typo.stderr
    assert not registry.exists() or "arch" not in registry.read_text()
    ok = run(*base, "--identifier", str(archive), "--option", "format=x-archive", registry=registry)
    assert ok.returncode == 0, ok.stderr
    # a platform's default format that fits needs no option; a relative path is under the tenant's import root
    (imports / "result.json").write_bytes(sample_file("telegram_export/result.json").read_bytes())
    tg = run("add", "--platform", "telegram", "--kind", "export_file", "--identifier", "result.json", "--name", "tg",
             registry=registry)
    assert tg.returncode == 0, tg.stderr


def test_add_options_help_refresh_window_and_list_header(registry):
    helped = run("add", "--help", registry=registry).stdout
    for flag in ("--tenant", "--interval-minutes", "--priority", "--history-horizon-days", "--refresh-window"):
        block = helped.split(flag, 1)[1].split("\n  --", 1)[0]
        assert len(block.split()) > 3, f"{flag} has no help"
    r = run("add", "--platform", "telegram", "--kind", "channel", "--identifier", "c", "--name", "c",
            "--refresh-window", "50", registry=registry)
    assert r.returncode == 0, r.stderr
    assert load_registry(registry).get("c").policy.refresh_window == 50
    listed = run("list", registry=registry).stdout.splitlines()
    assert listed[0].split() == ["source", "kind", "status", "identifier"] and listed[1].startswith("default.telegram.c")


def test_a_wrong_kind_is_reported_against_kind(registry):
    r = run("add", "--platform", "x", "--kind", "channel", "--identifier", "c", "--name", "c", registry=registry)
    assert r.returncode == 2 and "field 'kind': kind 'channel' is not supported for x" in r.stderr
    registry.write_text("sources:\n  - name: c\n    platform: x\n    kind: channel\n    identifier: a\n")
    listed = run("list", registry=registry)
    assert f"{registry}:4: entry 1 ('c'): field 'kind'" in listed.stderr


def test_add_warns_naming_the_credential_variable_a_live_source_needs(registry, monkeypatch):
    for var in [v for v in __import__("os").environ if v.startswith(("CRAWL_X_", "CRAWL_TELEGRAM_", "CRAWL_DISCOURSE_"))]:
        monkeypatch.delenv(var)
    x = run("add", "--platform", "x", "--kind", "account_timeline", "--identifier", "a", "--name", "a", "--tenant", "demo",
            registry=registry)
    assert x.returncode == 0 and "added demo.x.a" in x.stdout
    assert "warning: demo.x.a cannot sync until CRAWL_X_BEARER_TOKEN__DEMO is set" in x.stderr, x.stderr
    tg = run("add", "--platform", "telegram", "--kind", "channel", "--identifier", "c", "--name", "c", "--tenant", "acme",
             "--credential", "main", registry=registry)
    assert "CRAWL_TELEGRAM_SESSION__ACME__MAIN and CRAWL_TELEGRAM_API_ID and CRAWL_TELEGRAM_API_HASH are set" in tg.stderr
    monkeypatch.setenv("CRAWL_X_BEARER_TOKEN__DEMO", "set")
    monkeypatch.setenv("CRAWL_TELEGRAM_API_ID__ACME", "1")  # the tenant's default app stands in for the credential's
    quiet = run("add", "--platform", "x", "--kind", "account_timeline", "--identifier", "b", "--name", "b", "--tenant",
                "demo", registry=registry)
    assert quiet.returncode == 0 and "warning" not in quiet.stderr, quiet.stderr
    tg2 = run("add", "--platform", "telegram", "--kind", "channel", "--identifier", "d", "--name", "d", "--tenant", "acme",
              "--credential", "main", registry=registry)
    assert "CRAWL_TELEGRAM_SESSION__ACME__MAIN and CRAWL_TELEGRAM_API_HASH are set" in tg2.stderr, tg2.stderr
    forum = run("add", "--platform", "discourse", "--kind", "forum", "--identifier", "https://forum.example.org",
                "--name", "f", registry=registry)
    assert forum.returncode == 0 and "warning" not in forum.stderr, "a public forum needs no key"


def test_platform_names_are_case_insensitive(registry):
    from click.testing import CliRunner

    from crawl_assets.cli.main import cli

    runner = CliRunner()
    added = runner.invoke(cli, ["sources", "add", "--platform", "Telegram", "--kind", "Channel", "--identifier", "chan",
                                "--name", "chan", "--registry", str(registry)])
    assert added.exit_code == 0, added.output
    assert [(e.platform, e.kind.value) for e in load_registry(registry).entries] == [("telegram", "channel")]
    listed = runner.invoke(cli, ["sources", "list", "--platform", "TELEGRAM", "--registry", str(registry)])
    assert listed.exit_code == 0 and "default.telegram.chan" in listed.output, listed.output
    status = runner.invoke(cli, ["status", "--platform", "X"])
    assert "Invalid value" not in status.output, status.output
