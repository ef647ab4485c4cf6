"""Ctrl-C on ``crawl-assets ui``: a terminal sends SIGINT to its whole foreground process group. Only the
process ``ui`` started (``dg dev``) may get it, once; the processes that one started (its code server) must
not, so it can stop them in its own order. Modelled with two small scripts in place of ``dg dev`` and its
code server, each writing down the signals it got."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

LEADER = """
import signal, subprocess, sys, time
from pathlib import Path
out = Path(sys.argv[1])
helper = subprocess.Popen([sys.executable, sys.argv[2], str(out / "helper")])
got = []
signal.signal(signal.SIGINT, lambda *_: got.append("SIGINT"))
(out / "leader.ready").write_text("")
while not got:
    time.sleep(0.05)
time.sleep(0.5)  # what a second, group-wide SIGINT would have reached by now
(out / "leader").write_text(",".join(got))
helper.terminate()
sys.exit(0 if helper.wait() == -signal.SIGTERM else 3)
"""

HELPER = """
import signal, sys, time
from pathlib import Path
def noted(*_):
    Path(sys.argv[1]).write_text("SIGINT")
signal.signal(signal.SIGINT, noted)
while True:
    time.sleep(0.05)
"""

WRAPPER = """
import sys
from crawl_assets.cli.ui import run_interruptible
sys.exit(run_interruptible([sys.executable, sys.argv[1], sys.argv[2], sys.argv[3]]))
"""


def test_ctrl_c_reaches_the_started_process_once_and_not_its_children(tmp_path: Path):
    leader, helper = tmp_path / "leader.py", tmp_path / "helper.py"
    leader.write_text(textwrap.dedent(LEADER))
    helper.write_text(textwrap.dedent(HELPER))
    wrapper = subprocess.Popen([sys.executable, "-c", WRAPPER, str(leader), str(tmp_path), str(helper)],
                               start_new_session=True)  # a terminal's foreground group, led by `crawl-assets ui`
    try:
        for _ in range(200):
            if (tmp_path / "leader.ready").exists():
                break
            time.sleep(0.05)
        assert (tmp_path / "leader.ready").exists(), "the started process never came up"
        time.sleep(0.3)  # its helper too
        os.killpg(wrapper.pid, signal.SIGINT)  # Ctrl-C
        assert wrapper.wait(30) == 0
    finally:
        if wrapper.poll() is None:
            wrapper.kill()
    assert (tmp_path / "leader").read_text() == "SIGINT"  # got it, once
    assert not (tmp_path / "helper").exists(), "the started process's own child got the terminal's SIGINT"


def test_a_process_ended_by_a_signal_gives_the_shell_code(tmp_path: Path):
    from crawl_assets.cli.ui import run_interruptible

    assert run_interruptible([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"]) == 143
    assert run_interruptible([sys.executable, "-c", "raise SystemExit(4)"]) == 4


# Like ``dg dev``: no handler of its own, Python's default one (KeyboardInterrupt) does the orderly stop.
PLAIN_PYTHON = """
import sys, time
from pathlib import Path
Path(sys.argv[1]).write_text("")
try:
    while True:
        time.sleep(0.05)
except KeyboardInterrupt:
    sys.exit(0)
"""


def _no_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what a shell without job control gives `cmd &`


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_started_from_a_script_it_stops_on_sigterm_and_sigint(tmp_path: Path, signum: int):
    """No terminal, SIGINT ignored inherited (``crawl-assets ui &`` in a script): the started process must still
    get the interrupt it stops on, so ``ui`` exits when the script sends SIGTERM (or SIGINT) to it alone."""
    child = tmp_path / "child.py"
    child.write_text(textwrap.dedent(PLAIN_PYTHON))
    ready = tmp_path / "ready"
    wrapper = subprocess.Popen([sys.executable, "-c", WRAPPER, str(child), str(ready), "-"], stdin=subprocess.DEVNULL,
                               start_new_session=True, preexec_fn=_no_interrupts)
    try:
        for _ in range(200):
            if ready.exists():
                break
            time.sleep(0.05)
        assert ready.exists(), "the started process never came up"
        wrapper.send_signal(signum)
        assert wrapper.wait(30) == 0
    finally:
        if wrapper.poll() is None:
            os.killpg(wrapper.pid, signal.SIGKILL)
