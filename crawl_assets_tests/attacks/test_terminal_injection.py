"""Terminal and log injection (issue 30, item 14): registry values and server error texts reach the CLI, log lines
and the UI's metadata with their control and bidi-formatting characters escaped; Persian text stays readable."""

from __future__ import annotations

import json

import dagster as dg
import pytest
from click.testing import CliRunner

from crawl_assets.cli.main import cli
from crawl_assets.core.display import shown, shown_json
from crawl_assets.orchestration.monitoring.health import record_failure
from crawl_assets.registry import load_registry
from crawl_assets.registry.models import redact_secrets

HOSTILE = {
    "CR": "\r", "LF": "\n", "tab": "\t", "ANSI clear screen": "\x1b[2J", "ANSI window title": "\x1b]0;owned\x07",
    "DEL": "\x7f", "C1 CSI": "\x9b31m", "NEL": "\x85", "line separator": "\u2028", "LRE": "\u202a",
    "RLO": "\u202e", "LRI": "\u2066", "RLI": "\u2067", "FSI": "\u2068", "PDI": "\u2069",
}
RAW = {c for text in HOSTILE.values() for c in text if not c.isprintable()}
PERSIAN = "کانال\u200cهای خبری \u200fایران"  # letters, a zero-width non-joiner, a right-to-left mark: kept


def raw_in(text: str) -> set[str]:
    """The raw control or bidi characters in ``text``, its own line ends aside (line counts are checked apart)."""
    return {c for c in text.replace("\n", "") if c in RAW}


def test_shown_escapes_every_control_and_bidi_override_and_keeps_persian():
    for name, text in HOSTILE.items():
        assert not raw_in(shown(f"a{text}b")), name
    assert shown("a\r\nb\x1b[2J\u202ec") == "a\\r\\nb\\x1b[2J\\u202ec"
    assert shown(PERSIAN) == PERSIAN
    hostile = "".join(HOSTILE.values()) + PERSIAN
    assert json.loads(shown_json(json.dumps({"v": hostile}, ensure_ascii=False))) == {"v": hostile}
    assert not raw_in(shown_json(json.dumps(hostile, ensure_ascii=False))) and "\n" not in shown(hostile)


@pytest.fixture
def hostile_registry(tmp_path, dagster_home):
    identifier = "q " + "".join(HOSTILE.values()) + " " + PERSIAN
    reason = "paused by hand " + "".join(HOSTILE.values())
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n  - name: news\n    tenant: acme\n    platform: x\n    kind: search_query\n"
                    f"    identifier: {json.dumps(identifier)}\n    status: paused\n"
                    f"    status_reason: {json.dumps(reason)}\n"
                    f"  - name: {json.dumps('bad' + HOSTILE['RLO'] + HOSTILE['ANSI clear screen'])}\n"
                    "    platform: x\n    kind: search_query\n    identifier: q\n", encoding="utf-8")
    assert load_registry(path).entries[0].identifier == identifier  # the value itself is kept as written
    return path, identifier


def test_sources_list_and_show_print_no_control_or_bidi_character(hostile_registry):
    path, identifier = hostile_registry
    runner = CliRunner()
    listed = runner.invoke(cli, ["sources", "list", "--registry", str(path)])
    assert listed.exit_code == 2  # the invalid name
    assert not raw_in(listed.stdout) and not raw_in(listed.stderr)
    assert len(listed.stdout.splitlines()) == 2, "no value starts a line of its own"
    assert PERSIAN in listed.stdout and "\\x1b[2J" in listed.stdout and "\\u202e" in listed.stdout
    assert "entry 2" in listed.stderr and len(listed.stderr.splitlines()) == 1
    as_json = runner.invoke(cli, ["sources", "list", "--json", "--registry", str(path)])
    assert not raw_in(as_json.stdout) and len(as_json.stdout.splitlines()) == 1
    assert json.loads(as_json.stdout)["identifier"] == identifier  # escaped for the terminal, the same value
    shown_entry = runner.invoke(cli, ["sources", "show", "acme.x.news", "--registry", str(path)])
    assert shown_entry.exit_code == 0 and not raw_in(shown_entry.stdout)
    assert PERSIAN in shown_entry.stdout and "paused: paused by hand" in shown_entry.stdout


def test_status_logs_and_pause_reasons_escape_server_text(hostile_registry):
    path, _ = hostile_registry
    server_text = "HTTP 403: " + "".join(HOSTILE.values()) + " " + PERSIAN
    reason = redact_secrets(server_text)  # every pause reason, failure message and log line of one goes through it
    assert not raw_in(reason) and PERSIAN in reason
    with dg.DagsterInstance.get() as instance:
        record_failure(instance, "acme.x.news", server_text, run_id="r1")
    runner = CliRunner()
    for args in (["status"], ["status", "--json"], ["sources", "show", "acme.x.news"]):
        out = runner.invoke(cli, [*args, "--registry", str(path)])
        assert not raw_in(out.stdout) and not raw_in(out.stderr), args
    status_lines = runner.invoke(cli, ["status", "--registry", str(path)]).stdout.splitlines()
    assert len(status_lines) == 3  # header, the source, the counts
