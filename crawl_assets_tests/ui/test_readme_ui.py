"""The README's two newcomer steps, as a user runs them from the repository root: ``crawl-assets demo``
then ``crawl-assets ui`` (``dg dev``: webserver and daemon). Neither prints a warning, and the UI
answers on the demo's instance."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import httpx

from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.e2e.services import free_port, wait_for
from crawl_assets_tests.worlds import DemoHome, user_env

WARNING = re.compile(r"warn", re.IGNORECASE)


def test_demo_then_ui_start_without_warnings(tmp_path, demo_home: DemoHome):
    demo = demo_home  # `crawl-assets demo` in an empty home, as a user runs it (once per session)
    home = demo.copy_to(tmp_path / "crawl_home")
    env = user_env(home)
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert not WARNING.search(demo.stdout + demo.stderr), demo.stderr
    assert "Open the UI: crawl-assets ui " in demo.stdout

    port = free_port()
    log = tmp_path / "ui.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "crawl_assets.cli.main", "ui", "--port", str(port)],
                                env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        def ready() -> bool:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                return httpx.get(f"http://127.0.0.1:{port}/server_info", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(ready, 300, "crawl-assets ui to serve", lambda: log.read_text()[-3000:])
        # the daemon's sensors have ticked once it logged them; give them that long, then look
        wait_for(lambda: "Checking for new runs for sensor" in log.read_text(), 120, "the daemon's first sensor tick",
                 lambda: log.read_text()[-3000:])
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    text = log.read_text()
    assert not [line for line in text.splitlines() if WARNING.search(line)], text[-4000:]
    assert (home / "workspace.yaml").exists()
