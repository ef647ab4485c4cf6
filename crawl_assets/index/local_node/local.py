"""``crawl-assets es local``: one node of the distribution the tests run, in the foreground, keeping its indices
in a folder of its own between starts (the lake's index markers say what was indexed: a node that forgot its
indices would never get them again)."""

from __future__ import annotations

import hashlib
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path

from crawl_assets import settings
from crawl_assets.index.local_node.distribution import ES_VERSION, Unavailable, cache_root
from crawl_assets.index.local_node.node import NodeStartError, RealNode

NEEDS = ("a JDK 17+ (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless) and Maven (apt-get install maven); "
         "or run a cluster with docker compose (README, Elasticsearch)")


class LocalNodeError(RuntimeError):
    """Why the node cannot run here, in one line a user can act on."""


def data_folder(given: Path | None) -> Path:
    """``given``, else ``$DAGSTER_HOME/elasticsearch``; as root (the node then runs as ``nobody``, who cannot reach
    a home folder) a folder of the shared cache named after that one."""
    if given is not None:
        return given.resolve()
    default = (settings.dagster_home() / "elasticsearch").resolve()
    if os.geteuid() != 0:
        return default
    return cache_root() / f"local-{hashlib.sha256(str(default).encode()).hexdigest()[:12]}"


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def run_local_node(port: int, heap: str, data: Path | None, say: Callable[[str], None]) -> None:
    """Start the node, say where it answers, wait for an interrupt (``KeyboardInterrupt``), stop it."""
    if not port_free(port):
        raise LocalNodeError(f"port {port} on 127.0.0.1 is in use (another node? pass --port)")
    workdir = data_folder(data)
    say(f"starting Elasticsearch {ES_VERSION} (single node, data in {workdir}); the first start fetches the "
        "server with Maven and compiles the analysis plugin ...")
    node = RealNode(heap=heap, workdir=workdir, port=port)
    try:
        node.start()
    except Unavailable as exc:
        raise LocalNodeError(f"{exc}. crawl-assets es local needs {NEEDS}") from None
    except NodeStartError as exc:
        raise LocalNodeError(str(exc)) from None
    try:
        say(f"Elasticsearch {ES_VERSION} answers on {node.url}; Ctrl-C (or SIGTERM) stops it.\n"
            f"In another shell: export CRAWL_ES_URL={node.url} && crawl-assets es setup")
        while node.proc is not None and node.proc.poll() is None:
            time.sleep(1.0)
        raise LocalNodeError(f"the node stopped on its own; its log:\n{node.log_tail()}")
    except KeyboardInterrupt:
        say("stopping Elasticsearch ...")
    finally:
        node.stop()
