"""``crawl-assets ui``: the Dagster UI and daemon (``dg dev``) on the instance ``crawl-assets demo`` made.

``dg dev`` is started in ``DAGSTER_HOME`` itself, with a workspace file written there: started from a
folder holding another ``dagster.yaml`` (the repository root has one) Dagster warns that that file
will not be used. Before the first start, the run-retry daemon's event-log cursors are set to the end
of the log, which is what that daemon does on its first tick anyway, warning that it ignores older
events (no run of the demo needs a retry).

``dg dev`` runs in a session of its own, and this command hands it Ctrl-C (and SIGTERM) as one SIGINT: a
terminal's Ctrl-C reaches its whole foreground process group, so the code server ``dg dev`` had started got
the interrupt too and quit while ``dg dev`` was still stopping the daemon (which finishes its tick first),
and ``dg dev``'s monitor then warned that the code server had exited and restarted it. Alone, ``dg dev``
stops the webserver and the daemon, then its code server, in that order. ``dg dev`` starts with SIGINT at its
default even when a script started this command with SIGINT ignored (``crawl-assets ui &``), or it would
ignore the SIGINT handed to it.

One warning is filtered for ``dg dev``'s processes: Dagster's own code reads its deprecated
``ScheduleDefinition.environment_vars`` while describing every schedule (dagster-io/dagster#31015; no
definition of ours sets it), and its deprecation warning sometimes reaches the log. It asks nothing of a user.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import click

from crawl_assets import settings

# the message start of the one warning filtered (see above), as a PYTHONWARNINGS entry
DAGSTER_OWN_DEPRECATION = "ignore:Property `ScheduleDefinition.environment_vars` is deprecated:DeprecationWarning"

WORKSPACE = """# Written by `crawl-assets ui`: the project's code location (the same as the repository's workspace.yaml).
load_from:
  - python_module:
      module_name: crawl_assets.definitions
      location_name: crawl_assets
"""


def dg_command() -> str:
    """The ``dg`` of this environment (beside this Python), else the one on PATH."""
    beside = Path(sys.executable).with_name("dg")
    return str(beside) if beside.exists() else (shutil.which("dg") or "dg")


def start_event_log_consumer_at_end(home: Path) -> None:
    """Set the run-retry daemon's cursors to the end of the event log when it has none yet."""
    try:
        from dagster._daemon.auto_run_reexecution.event_log_consumer import DAGSTER_EVENT_TYPES, _create_cursor_key
    except ImportError:  # another Dagster version: its daemon will just say it ignores older events
        return
    import dagster as dg

    settings.use_dagster_home(home)
    with dg.DagsterInstance.get() as instance:
        keys = {_create_cursor_key(t) for t in DAGSTER_EVENT_TYPES}
        missing = keys - set(instance.daemon_cursor_storage.get_cursor_values(keys))
        if missing:
            end = str(instance.event_log_storage.get_maximum_record_id() or 0)
            instance.daemon_cursor_storage.set_cursor_values({k: end for k in missing})


@click.command("ui")
@click.option("--home", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="DAGSTER_HOME to serve (default: $DAGSTER_HOME, else ./.crawl_home).")
@click.option("--port", "-p", type=int, default=3000, show_default=True)
def ui(home: Path | None, port: int) -> None:
    """Open the Dagster UI (webserver + daemon, `dg dev`) on the demo's instance."""
    home = (home or settings.dagster_home()).resolve()
    if not (home / "dagster.yaml").exists():
        raise click.ClickException(f"no Dagster instance in {home}: run `crawl-assets demo` first (or pass --home)")
    workspace = home / "workspace.yaml"
    if not workspace.exists():
        workspace.write_text(WORKSPACE)
    start_event_log_consumer_at_end(home)
    settings.use_dagster_home(home)  # for `dg dev` and the processes it starts
    settings.add_python_warning_filter(DAGSTER_OWN_DEPRECATION)
    os.chdir(home)
    click.echo(f"DAGSTER_HOME {home}: starting `dg dev` on http://127.0.0.1:{port} (Ctrl-C stops it)", err=True)
    sys.stdout.flush()
    sys.exit(run_interruptible([dg_command(), "dev", "-w", str(workspace), "-p", str(port)]))


def run_interruptible(cmd: list[str]) -> int:
    """Run ``cmd`` in a session of its own until it exits; SIGINT and SIGTERM sent to this process reach it
    as one SIGINT (its own orderly shutdown). Returns its exit code (128 + N when signal N ended it)."""
    proc = subprocess.Popen(cmd, start_new_session=True, preexec_fn=_child_signals)

    def forward(_signum: int, _frame: object) -> None:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)

    before = {signum: signal.signal(signum, forward) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = proc.wait()  # a forwarded signal interrupts the wait only to run ``forward``; the wait goes on
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
    return 128 - code if code < 0 else code


def _child_signals() -> None:
    """In the child, before exec: SIGINT and SIGTERM at their defaults, so the SIGINT forwarded reaches Python's
    own handler even when this command was started with SIGINT ignored (``crawl-assets ui &`` in a script:
    ignored signals stay ignored across exec, and Python then installs no KeyboardInterrupt handler). On Linux
    also SIGINT when this command dies, however it dies (even SIGKILL), so ``dg dev`` never outlives it."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGINT)
