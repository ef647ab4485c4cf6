"""Real ``dagster-webserver`` and ``dagster-daemon`` processes for end-to-end tests.

Each starts in its own process group (``start_new_session``) and is stopped by signalling the group,
so their code servers and run workers go too. Output goes to files that ``tails()`` returns for
failure messages.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx

T = TypeVar("T")
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    def __init__(self, name: str, argv: list[str], env: dict[str, str], cwd: Path, log_dir: Path):
        self.name = name
        self.log = log_dir / f"{name}.log"
        self._fh = self.log.open("wb")
        self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=self._fh, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def stop(self) -> None:
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
            if self.proc.poll() is not None:
                break
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(wait)
            except subprocess.TimeoutExpired:
                continue
        try:  # whatever the group left behind (code servers, run workers)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._fh.close()

    def tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


class Services:
    """``dagster-daemon run`` and ``dagster-webserver`` on one workspace and environment."""

    def __init__(self, env: dict[str, str], cwd: Path, log_dir: Path):
        self.port = free_port()
        workspace = str(cwd / "workspace.yaml")
        self.daemon = Service("daemon", [str(BIN / "dagster-daemon"), "run", "-w", workspace], env, cwd, log_dir)
        self.web = Service("webserver", [str(BIN / "dagster-webserver"), "-w", workspace, "-h", "127.0.0.1",
                                         "-p", str(self.port)], env, cwd, log_dir)
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.web.stop()
        self.daemon.stop()

    def tails(self) -> str:
        return f"--- daemon log ---\n{self.daemon.tail()}\n--- webserver log ---\n{self.web.tail()}"

    def graphql(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        resp = httpx.post(f"{self.url}/graphql", json={"query": query, "variables": variables or {}}, timeout=60)
        resp.raise_for_status()
        body = resp.json()
        if body.get("errors"):
            raise AssertionError(f"GraphQL errors: {body['errors']}")
        return body["data"]

    def wait_ready(self, timeout: float = 120) -> None:
        def ready() -> bool:
            for svc in (self.daemon, self.web):
                if svc.proc.poll() is not None:
                    raise AssertionError(f"{svc.name} exited with {svc.proc.returncode}\n{self.tails()}")
            try:
                return httpx.get(f"{self.url}/server_info", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(ready, timeout, "webserver to answer", self.tails)


def wait_for(probe: Callable[[], T], timeout: float, what: str, logs: Callable[[], str] | None = None,
             interval: float = 0.5) -> T:
    """Poll ``probe`` until it returns something truthy; fail after ``timeout`` seconds with the logs."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}\n{logs() if logs else ''}")
        time.sleep(interval)
