"""One real single-node Elasticsearch for a test session, a bench or ``crawl-assets es local``, started and always
stopped.

Per node (unless given a folder and a port to keep): a fresh config folder (``ES_PATH_CONF``), data, logs, tmp
and snapshot folders in a temp folder owned by the user the node runs as, a free loopback port, a 512 MiB heap,
security off. Elasticsearch refuses to run as root: under root the node runs as ``nobody``. It is stopped with SIGTERM (the launcher stops the
server JVM), then killed by pid if it does not go; the launcher also gets SIGTERM if this process dies
(``PR_SET_PDEATHSIG``), and an ``atexit`` hook stops a node nobody stopped, so no JVM outlives its session.
"""

from __future__ import annotations

import atexit
import ctypes
import http.client
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from crawl_assets import settings
from crawl_assets.index.local_node import analysis_plugin, distribution

PR_SET_PDEATHSIG = 1
# Tiered compilation stopped at C1: a JVM that starts with ~40% less CPU and runs hot code slower; for the
# launcher, and for short-lived nodes (a cluster's members) whose start costs more than their work.
QUICK_JIT = "-XX:TieredStopAtLevel=1"
RUN_AS_ROOT_USER = ("nobody", "nogroup")


class NodeStartError(RuntimeError):
    """The node did not come up; the message ends with the tail of its log."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:  # runs in the child, after it switched user (the kernel would reset it before)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def prepare_home(version: str = distribution.ES_VERSION) -> tuple[Path, Path]:
    """(node home with the test analysis plugin, Java home); raises ``Unavailable`` with a one-line reason."""
    java = distribution.java_home(version)
    dist = distribution.unpacked(distribution.resolve_zip(version), version)
    plugin = analysis_plugin.build(dist, java)
    return distribution.node_home(dist, plugin), java


@dataclass(frozen=True)
class Membership:
    """A node's place in a multi-node cluster (``cluster.RealCluster``): its name and fixed ports, and the
    transport addresses and names the nodes discover each other by and bootstrap the first election with."""

    cluster_name: str
    node_name: str
    http_port: int
    transport_port: int
    seed_hosts: tuple[str, ...]
    initial_master_nodes: tuple[str, ...]


class RealNode:
    """``with RealNode() as node: node.url`` (or ``start()``/``stop()``); one member of a cluster when
    ``membership`` is given (then ``launch()`` all members before ``wait_healthy()`` on any). With ``workdir``
    the node keeps its data there from one start to the next (``crawl-assets es local``), and with ``port`` it
    answers on that port; otherwise both are new for each start and the folder is removed on stop."""

    def __init__(self, heap: str = "512m", start_timeout: float = 240.0, membership: Membership | None = None,
                 workdir: Path | None = None, port: int | None = None, java_opts: str = "",
                 version: str = distribution.ES_VERSION) -> None:
        """``java_opts``: extra options of the server JVM (e.g. ``QUICK_JIT``); ``version``: the server's."""
        self.heap, self.start_timeout, self.membership, self.java_opts = heap, start_timeout, membership, java_opts
        self.version = version
        self.fixed_workdir, self.fixed_port = workdir, port
        self.home: Path | None = None
        self.workdir: Path | None = None
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self._log = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def snapshot_dir(self) -> Path | None:
        """The folder the node may write snapshots to (``path.repo``)."""
        return self.workdir / "snapshots" if self.workdir else None

    # ---- start --------------------------------------------------------------------------------------
    def start(self) -> "RealNode":
        home, java = prepare_home(self.version)
        self.home = home
        last: NodeStartError | None = None
        for _ in range(1 if self.fixed_port else 3):  # a port taken between free_port() and the bind: try another one
            try:
                self._start_once(home, java)
                return self
            except NodeStartError as exc:
                last = exc
                if "BindException" not in str(exc) and "Address already in use" not in str(exc):
                    raise
        raise last  # type: ignore[misc]

    def _start_once(self, home: Path, java: Path) -> None:
        self.launch(home, java)
        self.wait_healthy()

    def launch(self, home: Path, java: Path) -> None:
        """Start the node's process without waiting for it (a cluster member is healthy only once its
        peers are up too)."""
        self.home = home
        self.workdir = self.fixed_workdir or Path(tempfile.mkdtemp(prefix="crawl-es-node-"))
        self.workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
        user = self._runtime_user()
        port = self.membership.http_port if self.membership else (self.fixed_port or free_port())
        conf = self._write_config(home, self.workdir, port)
        for sub in ("data", "logs", "tmp", "snapshots"):
            (self.workdir / sub).mkdir(exist_ok=True)
        if user is not None:
            uid, gid = pwd.getpwnam(user[0]).pw_uid, pwd.getpwnam(user[0]).pw_gid
            for path in [self.workdir, *self.workdir.rglob("*")]:
                os.chown(path, uid, gid)
        # The launcher JVM only starts the server and waits: C1 alone compiles it (~40% less CPU to start).
        env = {"PATH": settings.local_node().path, "LANG": "C.UTF-8", "ES_PATH_CONF": str(conf),
               "CLI_JAVA_OPTS": QUICK_JIT,
               "ES_JAVA_HOME": str(java), "ES_JAVA_OPTS": f"-Xms{self.heap} -Xmx{self.heap} {self.java_opts}".strip(),
               "ES_TMPDIR": str(self.workdir / "tmp"), "HOME": str(self.workdir)}
        self._log = open(self.workdir / "console.log", "ab")
        kwargs = {"user": user[0], "group": user[1], "extra_groups": []} if user else {}
        self.proc = subprocess.Popen([str(home / "bin" / "elasticsearch"), "-p", str(self.workdir / "es.pid")],
                                     cwd=self.workdir, env=env, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, preexec_fn=_die_with_parent, **kwargs)
        atexit.register(self.stop)

    def wait_healthy(self) -> None:
        """Wait for yellow/green health; on failure (or Ctrl-C) stop the node and raise ``NodeStartError``."""
        try:
            self._wait_healthy()
        except BaseException as exc:  # a failed start (or Ctrl-C while waiting) leaves no JVM behind
            tail = self.log_tail()
            self.stop()
            raise NodeStartError(f"Elasticsearch did not start on {self.url} ({exc!r}); log tail:\n{tail}") from None

    @staticmethod
    def _runtime_user() -> tuple[str, str] | None:
        if os.geteuid() != 0:
            return None
        user = settings.local_node().run_as or RUN_AS_ROOT_USER[0]
        entry = pwd.getpwnam(user)
        import grp

        return user, grp.getgrgid(entry.pw_gid).gr_name

    def _write_config(self, home: Path, workdir: Path, port: int) -> Path:
        conf = workdir / "config"
        conf.mkdir(exist_ok=True)
        shutil.copyfile(home / "config" / "log4j2.properties", conf / "log4j2.properties")
        # Older distributions write the GC log and crash files to logs/ under the working folder of the
        # launcher (the shared, read-only home): point them at this node's own logs folder.
        options = (home / "config" / "jvm.options").read_text()
        options = re.sub(r"(file=|ErrorFile=)(logs/)?(gc\.log|hs_err_pid%p\.log)", rf"\g<1>{workdir}/logs/\g<3>", options)
        options = options.replace("HeapDumpPath=data", f"HeapDumpPath={workdir}/data")
        (conf / "jvm.options").write_text(options)
        (conf / "jvm.options.d").mkdir(exist_ok=True)
        member = self.membership
        topology = ({"cluster.name": member.cluster_name, "node.name": member.node_name,
                     "transport.port": member.transport_port, "discovery.seed_hosts": list(member.seed_hosts),
                     "cluster.initial_master_nodes": list(member.initial_master_nodes)} if member else
                    {"cluster.name": "crawl-assets-local" if self.fixed_workdir else f"crawl-test-{os.getpid()}",
                     "node.name": "crawl-test",
                     "discovery.type": "single-node", "transport.port": free_port()})
        settings = {
            **topology, "network.host": "127.0.0.1", "http.port": port,
            "path.data": str(workdir / "data"), "path.logs": str(workdir / "logs"),
            # Snapshots of the tests' worlds (es_node.fixtures: snapshot once, restore per test).
            "path.repo": [str(workdir / "snapshots")],
            "xpack.security.enabled": False,
            # A crowded shared disk must not turn indices read-only under the tests (a real-cluster safety net).
            "cluster.routing.allocation.disk.threshold_enabled": False,
        }
        (conf / "elasticsearch.yml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in settings.items()))
        self.port = port
        return conf

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                raise NodeStartError("the node exited")
            try:
                with urllib.request.urlopen(f"{self.url}/_cluster/health?wait_for_status=yellow&timeout=2s",
                                            timeout=10) as resp:
                    if json.loads(resp.read()).get("status") in ("green", "yellow"):
                        return
            except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError):
                pass  # not answering yet, or an HTTP layer still starting (a cut or malformed answer)
            time.sleep(0.5)
        raise NodeStartError(f"no yellow/green health within {self.start_timeout:.0f}s")

    # ---- stop ---------------------------------------------------------------------------------------
    def kill(self) -> None:
        """SIGKILL the server JVM (a crash: no shutdown, no goodbye to the cluster); ``stop()`` cleans up."""
        server = self._server_pid()
        if server is None:
            raise RuntimeError(f"the node on {self.url} is not running")
        os.kill(server, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(timeout=60)  # the launcher exits once its server is gone

    def _server_pid(self) -> int | None:
        """The server JVM's pid (from ``-p``), only while that pid is still our node's process."""
        if self.workdir is None:
            return None
        try:
            pid = int((self.workdir / "es.pid").read_text().strip())
            with open(f"/proc/{pid}/environ", "rb") as fh:
                ours = f"ES_PATH_CONF={self.workdir / 'config'}".encode() in fh.read().split(b"\0")
        except (OSError, ValueError):
            return None
        return pid if ours else None

    def stop(self, timeout: float = 60.0) -> None:
        atexit.unregister(self.stop)
        server = self._server_pid()
        if server is not None and self._throwaway():
            # its folder is removed below: nothing is worth a graceful shutdown, which can wait out the timeout
            # (a node that still answers requests in flight, or lost its cluster's master)
            os.kill(server, signal.SIGKILL)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # the launcher stops the server JVM and waits for it
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        deadline = time.monotonic() + 10
        while server is not None and self._server_pid() == server and time.monotonic() < deadline:
            time.sleep(0.1)
        if server is not None and self._server_pid() == server:
            os.kill(server, signal.SIGKILL)
        if self._log is not None:
            self._log.close()
            self._log = None
        self.proc = None
        if self.workdir is not None and self._throwaway():
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def _throwaway(self) -> bool:
        """A node whose data goes with it (no folder given, none kept for debugging)."""
        return self.fixed_workdir is None and not settings.local_node().keep_workdir

    def log_tail(self, lines: int = 40) -> str:
        """The last lines the node printed (its console carries the log), else of its log files."""
        if self.workdir is None:
            return ""
        for path in (self.workdir / "console.log", *sorted((self.workdir / "logs").glob("*.log"))):
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            if text.strip():
                return "\n".join(text.splitlines()[-lines:])
        return "(the node wrote no log)"

    def __enter__(self) -> "RealNode":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
