"""Every shell command of README.md, docs/ and the package's README files runs as written on the demo's data.

Each document runs in a fresh copy of the demo's world: a project folder holding the repository's files and
``.crawl_home``, the home ``crawl-assets demo`` made (no cluster: the README's quick start), built once per
session (``conftest.py``). Its commands run one after another in one user's shell (exported variables carry
over); servers are started as the document starts them and must stop on SIGTERM; every ``curl`` must get a
2xx answer (``--fail-with-body`` is added by a ``curl`` placed first on PATH) that holds something
(``ANSWERS``: the walk-through's words, thread ids and authors exist in the demo).

What a test cannot run as written is in ``NOT_RUN``, each with its reason; what the test puts in place of
the user's own machine is in ``USER_FILES`` and ``substitute``. Nothing else is left out.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.docs.commands import SERVERS, SHELL_LANGUAGES, Command, Shell, blocks, commands, documents, rel
from crawl_assets_tests.docs.commands import comment_start as _comment
from crawl_assets_tests.e2e.services import free_port
from crawl_assets_tests.es_node.fixtures import credentials_env

# (document, start of the command): why it is not run here. Reviewed; keep it small.
NOT_RUN: dict[tuple[str, str], str] = {
    ("README.md", "python3.11 -m venv .venv"): "a new virtualenv installed from PyPI (minutes): bench/install.py and "
    ".ci/run run it as written; the world this test starts from is its result, the demo's home",
    ("README.md", 'pip install -c constraints.txt -e ".[dev]" && python -m pytest'): "the test suite itself",
    ("README.md", "python -m pytest -m unit"): "the test suite itself (its quick subset)",
    ("README.md", "crawl-assets ui"): "dg dev: started and stopped by crawl_assets_tests/ui/test_readme_ui.py (Ctrl-C "
    "in a terminal) and modelled for scripts by cli/test_ui_interrupt.py",
    ("README.md", "export DAGSTER_PG_URL="): "needs a PostgreSQL server with a database `dagster` (and would move the "
    "rest of the README's commands there); the Postgres instance tests cover it (CRAWL_TEST_PG_URL)",
    ("README.md", "docker compose up"): "Docker (the same settings are checked by crawl_assets_tests/deploy/)",
    ("docs/ADDING_A_SOURCE.md", "pip install -c constraints.txt -e . && lint-imports"): "would reinstall the "
    "package under test; lint-imports runs in .ci/run and architecture/test_contracts.py",
    ("docs/ADDING_A_SOURCE.md", "python -m pytest"): "the test suite itself",
    ("docs/sources/telegram.md", "crawl-assets telegram login"): "interactive: a login code Telegram sends to a phone",
    ("docs/sources/telegram.md", "crawl-assets telegram check"): "asks Telegram's servers about the accounts logged in above",
    ("docs/OPERATIONS.md", ".ci/refresh-constraints"): "re-resolves every dependency from PyPI (minutes): a "
    "maintainer's step after changing pyproject.toml",
}

# The user's own files the documents copy from their machine, stood in for by the demo's sample exports.
USER_FILES = {
    "exports/tweets.js": "x_archive_tweets.js",
    "x-archive/data/tweets.js": "x_archive_tweets.js",
    "exports/2019/result.json": "telegram_export/result.json",
}


def _json(body: str) -> dict:
    return json.loads(body)


# What an API answer must hold for the documented example to be a useful one on the demo's data.
ANSWERS: dict[str, Callable[[str], bool]] = {
    "/v1/search": lambda body: _json(body)["total"] > 0,
    "/v1/aggregations/top/": lambda body: bool(_json(body)["buckets"]),
    "/v1/aggregations/timeline": lambda body: any(b["count"] for b in _json(body)["buckets"]),
    "/v1/threads/": lambda body: len(_json(body)["items"]) > 1
    and not next(i for i in _json(body)["items"] if i["key"] == _json(body)["anchor"])["missing"],
    "/v1/authors/": lambda body: _json(body)["records"] > 0,
    "/v1/networks/": lambda body: "<edge " in body,
    "/v1/exports/records": lambda body: len(body.splitlines()) > 1,
    "/v1/trends": lambda body: bool(_json(body)["items"]),
    # a topic's records or timeline (before the list: the first matching prefix answers)
    "/v1/topics/": lambda body: bool(_json(body).get("records")) or any(b["count"] for b in _json(body).get("buckets", [])),
    "/v1/topics": lambda body: bool(_json(body)["topics"]),
    "/v1/places.geojson": lambda body: bool(_json(body)["features"]),
    "/v1/places/": lambda body: bool(_json(body)["records"]),
    "/v1/places": lambda body: bool(_json(body)["places"]),
    "/v1/releases": lambda body: len(body.splitlines()) > 0,  # the archive's records.jsonl
}


def _sheet_lines(path: Path) -> str:
    """An XLSX export's records sheet as lines of tab-separated cells (what a CSV export's lines are)."""
    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True)
    rows = book["records"].iter_rows(values_only=True)
    return "\n".join("\t".join("" if v is None else str(v) for v in row) for row in rows)


def _released_records(path: Path) -> str:
    """A release archive's records.jsonl (what the API sent, unpacked in memory)."""
    import tarfile

    with tarfile.open(path) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/records.jsonl"))
        return tar.extractfile(member).read().decode()


def not_run(command: Command) -> str | None:
    return next((why for (doc, start), why in NOT_RUN.items() if doc == command.doc and command.text.startswith(start)),
                None)


SHELL_DOCS = [d for d in documents() if commands(d)]


def test_no_shell_command_hides_in_an_unlabelled_block():
    """A block the test would not run must not hold commands a user would type (label it ``bash``)."""
    typed = re.compile(r"^\s*(crawl-assets|curl|pip|python3?(\.\d+)?|export|docker|helm|kubectl|mkdir|cp|cd) ", re.M)
    found = [f"{rel(d)}:{line} ({language or 'no language'})" for d in documents()
             for language, line, body in blocks(d) if language not in SHELL_LANGUAGES and typed.search(body)]
    assert not found, f"shell commands in blocks not marked bash: {found}"


def test_no_command_hides_in_a_comment():
    """``# then: curl ...`` is a command a user types (and the test would skip): write it as a command."""
    typed = re.compile(r"#.*?\b(curl|crawl-assets|pip install|export) ")
    found = [f"{rel(d)}:{line + i}: {text.strip()}" for d in documents() for language, line, body in blocks(d)
             if language in SHELL_LANGUAGES for i, text in enumerate(body.splitlines())
             if (start := _comment(text)) is not None and typed.search(text[start:])]
    assert not found, f"commands inside comments: {found}"


def test_every_not_run_entry_names_a_documented_command():
    listed = {(c.doc, c.text) for d in SHELL_DOCS for c in commands(d)}
    stale = [key for key in NOT_RUN if not any(doc == key[0] and text.startswith(key[1]) for doc, text in listed)]
    assert not stale, f"NOT_RUN entries matching no command (remove them): {stale}"


def world(tmp_path: Path, demo_home: Path) -> tuple[Path, Path]:
    """(project folder with the repository's files and a copy of the demo's home, the user's home folder)."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in (".git", ".venv", ".crawl_home") and not entry.name.startswith(".pytest"):
            (project / entry.name).symlink_to(entry)
    shutil.copytree(demo_home, project / ".crawl_home", symlinks=True)
    samples = REPO / "crawl_assets" / "sample_data"
    for target, sample in USER_FILES.items():
        (home / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(samples / sample, home / target)
    return project, home


def user_env(home: Path, bin_dir: Path) -> dict[str, str]:
    """A newcomer's environment: no DAGSTER_HOME (the CLI then uses ./.crawl_home), no CRAWL_* setting, and
    Python's default bytecode cache (no PYTHONDONTWRITEBYTECODE: each command would compile its imports again)."""
    keep = ("LANG", "LC_ALL", "TMPDIR", "CRAWL_TEST_M2_REPO", "CRAWL_TEST_ES_CACHE", "CRAWL_TEST_ES_VERSION",
            "ES_JAVA_HOME", "JAVA_HOME")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update({"HOME": str(home), "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent),
                                                            os.environ.get("PATH", "/usr/bin:/bin")])})
    return env


def curl_shim(bin_dir: Path) -> None:
    real = shutil.which("curl")
    if real is None:
        pytest.fail("curl is not installed: the documents' API examples need it") if os.environ.get(
            "CRAWL_TEST_REQUIRE_REAL_ES") else pytest.skip("curl is not installed")
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "curl").write_text(f'#!/bin/sh\nexec {real} --fail-with-body "$@"\n')
    (bin_dir / "curl").chmod(0o755)


class Ports:
    """The ports the documents name, each a free one here (several test sessions may share a machine); the cluster
    (``http://localhost:9200``) is the session's node, unless the document starts its own (``crawl-assets es local``)."""

    def __init__(self, es_url: str | None) -> None:
        self.es_url = es_url
        self.map = {8090: free_port(), 8088: free_port()}

    def substitute(self, text: str) -> str:
        if text.startswith("crawl-assets es local") and "--port" not in text:
            port = free_port()
            self.es_url = f"http://127.0.0.1:{port}"
            text = text.replace("crawl-assets es local", f"crawl-assets es local --port {port}", 1)
        if self.es_url:
            text = re.sub(r"http://(localhost|127\.0\.0\.1):9200\b", self.es_url, text)
        for fixed, port in self.map.items():
            text = re.sub(rf"(?<=[:= ]){fixed}\b", str(port), text)
        return text

    @staticmethod
    def server_port(text: str) -> int:
        m = re.search(r"--port (\d+)", text)
        assert m, f"a server command without --port: {text}"
        return int(m.group(1))


def check_answer(command: Command, run: str, stdout: str, cwd: Path) -> None:
    path = re.search(r"http://127\.0\.0\.1:\d+(/[^\s\"'?]*)", run)
    if not path or not path.group(1).startswith("/v1/"):
        return
    check = next((fn for prefix, fn in ANSWERS.items() if path.group(1).startswith(prefix)), None)
    assert check is not None, f"{command.where()}: no entry in ANSWERS for {path.group(1)}: add what it must hold"
    out = re.search(r"-o (\S+)", run)
    file = cwd / out.group(1) if out else None
    reader = {".xlsx": _sheet_lines, ".tar": _released_records}.get(file.suffix if file else "", Path.read_text)
    body = stdout if file is None else reader(file)
    assert check(body), f"{command.where()}: `{run}` answered nothing useful on the demo's data:\n{body[:2000]}"


@pytest.mark.parametrize("doc", [d for d in SHELL_DOCS if not all(map(not_run, commands(d)))], ids=rel)
def test_commands_run_as_written(doc: Path, demo_home: Path, tmp_path: Path, request: pytest.FixtureRequest):
    cmds = commands(doc)
    own_node = any(c.text.startswith("crawl-assets es local") for c in cmds)
    needs_node = not own_node and any(re.search(r"(localhost|127\.0\.0\.1):9200", c.text) for c in cmds)
    es_url = request.getfixturevalue("es_url") if needs_node else None
    project, home = world(tmp_path, demo_home)
    curl_shim(tmp_path / "bin")
    shell = Shell(project, {**user_env(home, tmp_path / "bin"), **(credentials_env() if needs_node else {})}, tmp_path)
    ports = Ports(es_url)
    ran = 0
    try:
        for command in cmds:
            if not_run(command):
                continue
            text = ports.substitute(command.text)
            if text.startswith(SERVERS):
                shell.start(command, text, ports.server_port(text))
                continue
            result = shell.run(command, text)
            assert result.returncode == 0, (f"{command.where()}: `{text}` exited {result.returncode}\n"
                                            f"stdout: {result.stdout[-2000:]}\nstderr: {result.stderr[-3000:]}")
            check_answer(command, text, result.stdout, Path((tmp_path / "cwd").read_text().strip()))
            ran += 1
    finally:
        problems = shell.stop_servers()
        if own_node:
            _remove_local_node_data(project, shell.env)
    assert not problems, problems
    assert ran, f"{rel(doc)}: no command ran"


def _remove_local_node_data(project: Path, env: dict[str, str]) -> None:
    """``crawl-assets es local`` keeps its indices between starts; this test's node must not outlive the test."""
    from crawl_assets.index.local_node.local import data_folder

    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        mp.delenv("DAGSTER_HOME", raising=False)
        shutil.rmtree(data_folder(None), ignore_errors=True)
