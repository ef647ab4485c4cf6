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

    def stop(self, graceful: bool = True) -> None:
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5))[0 if graceful else 1:]:
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
    """A code server (``dagster code-server start``), ``dagster-daemon run`` and ``dagster-webserver`` on one
    environment, as docker-compose.yml deploys them: the daemon and the webserver reach the code location
    over gRPC (``workspace.docker.yaml``'s shape), so the code is loaded once, not by a code server per
    service that the daemon replaces every minute, and run workers are started by that one server.
    ``daemon`` overrides the daemon's command (``[python, -m, module]`` that runs ``dagster-daemon``)."""

    def __init__(self, env: dict[str, str], cwd: Path, log_dir: Path, daemon: list[str] | None = None):
        self.port, self.code_port = free_port(), free_port()
        self.env, self.cwd, self.log_dir = env, cwd, log_dir
        self.workspace = log_dir / "workspace.yaml"
        self.workspace.write_text(f"load_from:\n  - grpc_server:\n      host: 127.0.0.1\n      port: {self.code_port}\n"
                                  "      location_name: crawl_assets\n")
        self.daemon_argv = [*(daemon or [str(BIN / "dagster-daemon")]), "run", "-w", str(self.workspace)]
        self.code = Service("code", [str(BIN / "dagster"), "code-server", "start", "-h", "127.0.0.1",
                                     "-p", str(self.code_port), "-m", "crawl_assets.definitions"], env, cwd, log_dir)
        self.daemon: Service | None = None
        self.web: Service | None = None
        self.url = f"http://127.0.0.1:{self.port}"

    def _services(self) -> list[Service]:
        return [s for s in (self.web, self.daemon, self.code) if s is not None]

    def stop(self) -> None:
        """The daemon and the webserver stopped together, then the code server killed: nothing uses it any more
        (it let a SIGTERM wait out the 15 s), and its group takes any run worker with it."""
        users = [s for s in (self.web, self.daemon) if s is not None]
        for svc in users:
            if svc.proc.poll() is None:
                try:
                    os.killpg(svc.proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for svc in users:
            svc.stop()
        self.code.stop(graceful=False)

    def tails(self) -> str:
        return "".join(f"--- {s.name} log ---\n{s.tail()}\n" for s in reversed(self._services()))

    def graphql(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        resp = httpx.post(f"{self.url}/graphql", json={"query": query, "variables": variables or {}}, timeout=60)
        resp.raise_for_status()
        body = resp.json()
        if body.get("errors"):
            raise AssertionError(f"GraphQL errors: {body['errors']}")
        return body["data"]

    def _alive(self) -> None:
        for svc in self._services():
            if svc.proc.poll() is not None:
                raise AssertionError(f"{svc.name} exited with {svc.proc.returncode}\n{self.tails()}")

    def wait_ready(self, timeout: float = 120) -> None:
        """The code server answering (it serves once the code is loaded), then the daemon and the webserver
        started on it, and the webserver answering."""
        import grpc
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        def code_ready() -> bool:  # the server reports SERVING once it serves, after loading the code
            self._alive()
            with grpc.insecure_channel(f"127.0.0.1:{self.code_port}") as channel:
                try:
                    answer = health_pb2_grpc.HealthStub(channel).Check(
                        health_pb2.HealthCheckRequest(service="DagsterApi"), timeout=5)
                except grpc.RpcError:  # not listening yet
                    return False
            return answer.status == health_pb2.HealthCheckResponse.SERVING

        def web_ready() -> bool:
            self._alive()
            try:
                return httpx.get(f"{self.url}/server_info", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        deadline = time.monotonic() + timeout
        wait_for(code_ready, timeout, "the code server to answer", self.tails, interval=0.2)
        if self.daemon is None:
            self.daemon = Service("daemon", self.daemon_argv, self.env, self.cwd, self.log_dir)
            self.web = Service("webserver", [str(BIN / "dagster-webserver"), "-w", str(self.workspace),
                                             "-h", "127.0.0.1", "-p", str(self.port)], self.env, self.cwd, self.log_dir)
        wait_for(web_ready, max(deadline - time.monotonic(), 30), "webserver to answer", self.tails, interval=0.2)


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
