"""The shell commands of the documentation, and a user's shell that runs them one by one.

A document's commands are the lines of its ``bash``/``sh``/``shell``/``console`` blocks: comment lines dropped,
lines ending in ``\\`` (outside a comment) joined to the next. ``Shell`` runs each with bash in a project folder
of its own, keeping exported variables and the current folder from one command to the next as a terminal
would; a server command (``SERVERS``) is started in the background the way a script would (no terminal,
SIGINT ignored), waited for on its port, and stopped with SIGTERM at the end, which it must obey.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from crawl_assets_tests.conftest import REPO

SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.S | re.M)
# Long-running commands the documents start: the test starts them in the background and waits for their port.
SERVERS = ("crawl-assets api serve", "crawl-assets webhooks serve", "crawl-assets es local")


def documents() -> list[Path]:
    """README.md, every page under docs/, and the README.md files inside the package (index, sources)."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "crawl_assets").rglob("README.md"))]


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@dataclass(frozen=True)
class Command:
    doc: str
    line: int
    text: str

    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def comment_start(line: str) -> int | None:
    """Where an unquoted ``#`` starting a word begins a comment, else None."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
            elif ch == "\\" and quote == '"':
                continue
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return i
    return None


def blocks(path: Path) -> list[tuple[str, int, str]]:
    """(language, line of the first line inside, body) of every fenced block."""
    text = path.read_text()
    return [(m.group(1), text[:m.start(2)].count("\n") + 1, m.group(2)) for m in FENCE.finditer(text)]


def commands(path: Path) -> list[Command]:
    out: list[Command] = []
    for language, first, body in blocks(path):
        if language not in SHELL_LANGUAGES:
            continue
        pending, start = "", 0
        for offset, raw in enumerate(body.splitlines()):
            line = raw.rstrip()
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            start = start if pending else first + offset
            comment = comment_start(line)
            if comment is None and line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            out.append(Command(rel(path), start, (pending + line).strip()))
            pending = ""
    return out


@dataclass
class Server:
    command: Command
    port: int
    proc: subprocess.Popen
    log: Path

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


@dataclass
class Result:
    command: Command
    run: str
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Shell:
    """One user's terminal: a project folder (``cwd``), a home, an environment, and the servers it started."""

    cwd: Path
    env: dict[str, str]
    work: Path
    servers: list[Server] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.state = self.work / "state.sh"
        self.state.write_text("")
        self.where = self.work / "cwd"
        self.where.write_text(str(self.cwd))

    def _script(self, command: str, *, server: bool = False) -> str:
        prelude = f'. {shlex.quote(str(self.state))}\ncd "$(cat {shlex.quote(str(self.where))})"\nset -o pipefail\n'
        if server:
            return prelude + f"exec {command}\n"
        after = (f"\n__rc=$?\nexport -p > {shlex.quote(str(self.state))}\npwd > {shlex.quote(str(self.where))}\n"
                 "exit $__rc\n")
        return prelude + command + after

    def run(self, command: Command, text: str, timeout: float = 600) -> Result:
        done = subprocess.run(["bash", "-c", self._script(text)], cwd=self.cwd, env=self.env, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return Result(command, text, done.returncode, done.stdout, done.stderr)

    def start(self, command: Command, text: str, port: int, timeout: float = 300) -> Server:
        """Start ``text`` as a script would (``cmd &``: no terminal, SIGINT ignored) and wait for its port."""
        log = self.work / f"server-{len(self.servers)}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(["bash", "-c", self._script(text, server=True)], cwd=self.cwd, env=self.env,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, preexec_fn=_ignore_sigint)
        server = Server(command, port, proc, log)
        self.servers.append(server)
        deadline = time.monotonic() + timeout
        while not _answers(port):
            if proc.poll() is not None:
                raise AssertionError(f"{command.where()}: `{text}` exited with {proc.returncode}:\n{server.tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{command.where()}: `{text}` did not answer on port {port}:\n{server.tail()}")
            time.sleep(0.5)
        return server

    def stop_servers(self, timeout: float = 120) -> list[str]:
        """SIGTERM to each server (newest first); what did not stop cleanly (then killed)."""
        problems = []
        for server in reversed(self.servers):
            if server.proc.poll() is None:
                server.proc.send_signal(signal.SIGTERM)
                try:
                    server.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    problems.append(f"{server.command.where()}: still running {timeout:.0f}s after SIGTERM")
            # 0, or ended by the SIGTERM it re-raised after its own orderly shutdown (uvicorn does)
            if server.proc.returncode not in (0, -signal.SIGTERM, 128 + signal.SIGTERM, None):
                problems.append(f"{server.command.where()}: exited {server.proc.returncode} on SIGTERM:\n{server.tail()}")
            try:
                os.killpg(server.proc.pid, signal.SIGKILL)  # whatever it left behind in its session
            except ProcessLookupError:
                pass
        self.servers.clear()
        return problems


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _answers(port: int) -> bool:
    import httpx

    try:
        httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        return True
    except httpx.HTTPError:
        return False
