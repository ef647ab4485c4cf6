"""A PostgreSQL server of the test's own (``initdb`` into a temporary folder, a free loopback port), for tests
that stop and start the server: doing that to the shared server of ``CRAWL_TEST_PG_URL`` would break every
other test (and every other suite) using it at the same moment.

Run as an unprivileged user when the tests run as root (``initdb`` and ``postgres`` refuse root).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


def postgres_bin() -> Path | None:
    """The newest installed server's bin folder (Debian's layout), or one on PATH; None when absent."""
    root = Path("/usr/lib/postgresql")
    if root.is_dir():
        versions = sorted((p for p in root.iterdir() if (p / "bin" / "initdb").is_file()),
                          key=lambda p: [int(x) for x in p.name.split(".") if x.isdigit()])
        if versions:
            return versions[-1] / "bin"
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PrivatePostgres:
    bin: Path
    data: Path
    port: int
    user: str | None  # run as this user (when we are root), else as ourselves

    @property
    def url(self) -> str:
        return f"postgresql+psycopg2://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 120) -> None:
        cmd = [str(self.bin / args[0]), *args[1:]]
        kwargs = {}
        if self.user:
            entry = pwd.getpwnam(self.user)
            kwargs = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kwargs)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {result.stdout}{result.stderr}"[-2000:])

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.data / "server.log"), "-w", "-t", "60",
                  "-o", f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def ready(self) -> bool:
        with socket.socket() as s:
            s.settimeout(1)
            return s.connect_ex(("127.0.0.1", self.port)) == 0


@contextmanager
def private_postgres(folder: Path) -> Iterator[PrivatePostgres]:
    """A fresh server in ``folder`` (trust auth for ``postgres`` over loopback), stopped at the end."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        raise FileNotFoundError("no PostgreSQL server binaries (initdb) installed")
    user = "nobody" if os.geteuid() == 0 else None
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "pgdata"
    if user:
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    server = PrivatePostgres(bin_dir, data, _free_port(), user)
    server._run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
    server.start()
    try:
        deadline = time.monotonic() + 30
        while not server.ready() and time.monotonic() < deadline:
            time.sleep(0.1)
        yield server
    finally:
        try:
            server.stop()
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
