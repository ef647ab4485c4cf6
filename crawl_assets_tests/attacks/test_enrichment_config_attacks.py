"""A bad ``enrichment.yaml`` costs the enrichment only, never the code location (issue 30, item 10): an unreadable
model folder raised ``OSError`` while the definitions loaded, ``model: /dev/zero`` hung them, an alias bomb in
``trusted_types`` exhausted memory. Each such file now loads (the syncs are there), and running the
enrichment fails with a message naming the file, the key and the problem.

Each load runs in a forked child with a time limit and a memory bound, so the code before the fix fails the
test instead of hanging or exhausting the machine; as root, the child gives up its privileges (a folder of
mode 000 is unreadable only to other users)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import dagster as dg
import pytest

from crawl_assets.definitions import build_definitions  # imported before any fork: the child reads no module

SOURCE = "acme.x.timeline"
NOBODY = 65534
LIMIT_SECONDS = 60
MEMORY_HEADROOM = 1536 << 20

BOMB = "enrichers:\n  classifier:\n    trusted_types: [&a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]" + "".join(
    f", &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)) + "]\n"


@pytest.fixture
def home(monkeypatch) -> Iterator[Path]:
    """An instance folder every user can read and write (the child may run as nobody), and every module the
    child uses imported (as nobody it may not read the interpreter's own files)."""
    root = Path(tempfile.mkdtemp(prefix="crawl-enrich-config-"))
    os.chmod(root, 0o777)
    for name, value in {"DAGSTER_HOME": root, "CRAWL_LAKE": root / "lake", "CRAWL_REGISTRY": root / "sources.yaml",
                        "CRAWL_IMPORT_ROOT": root / "imports", "CRAWL_ENRICHMENT": root / "enrichment.yaml",
                        "CRAWL_MODELS": root / "models"}.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("CRAWL_ES_URL", raising=False)  # no cluster: the no-index sync pair is defined
    (root / "models").mkdir(mode=0o777)
    os.chmod(root / "models", 0o777)
    _load_and_enrich()  # with no enrichment.yaml: every enricher at its defaults
    yield root
    for folder, dirs, _ in os.walk(root):
        for d in dirs:
            os.chmod(Path(folder) / d, 0o777)
    shutil.rmtree(root)


def _in_child(fn: Callable[[], dict], unprivileged: bool) -> dict:
    """``fn()`` in a forked child, bounded in time and memory; its JSON answer, or why it gave none."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        code, out = 1, {"error": "no answer"}
        try:
            size = int(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmSize:"))) << 10
            resource.setrlimit(resource.RLIMIT_AS, (size + MEMORY_HEADROOM, size + MEMORY_HEADROOM))
            if unprivileged and os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            out, code = fn(), 0
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            out = {"error": f"{type(exc).__name__}: {exc}"[:2000], "trace": traceback.format_exc()[-3000:]}
        with os.fdopen(write, "w") as fh:
            fh.write(json.dumps(out))
        os._exit(code)
    os.close(write)
    deadline = time.monotonic() + LIMIT_SECONDS
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            with os.fdopen(read) as fh:
                text = fh.read()
            return json.loads(text) if text else {"error": f"the child died (status {status})"}
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(read)
    return {"error": f"loading the definitions did not finish in {LIMIT_SECONDS} s"}


def _load_and_enrich() -> dict:
    """Load the code location's definitions, then run the classifier's enrichment step of one source."""
    defs = build_definitions()
    keys = defs.resolve_asset_graph().get_all_asset_keys()
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("x_sources", [SOURCE])
    asset = defs.resolve_assets_def(dg.AssetKey(["x", "enrichment", "classifier"]))
    result = dg.materialize([asset], partition_key=SOURCE, instance=instance,
                            raise_on_error=False)
    failures = [e.step_failure_data.user_failure_data.description for e in result.get_step_failure_events()
                if e.step_failure_data.user_failure_data is not None]
    return {"sync_job": defs.resolve_job_def("x_sync_no_index").name, "normalized": ["x", "normalized_records"] in
            [k.path for k in keys], "enrich_ok": result.success, "failures": failures}


def _unreadable_folder(home: Path) -> tuple[str, str]:
    model = home / "models" / "hf"
    (model / "tokenizer").mkdir(parents=True)
    (model / "config.json").write_text("{}")
    (model / "weights.bin").write_bytes(b"\0" * 64)
    os.chmod(model, 0o755)
    os.chmod(model / "weights.bin", 0o000)  # a file and a folder of the model only its owner (root) can read
    os.chmod(model / "tokenizer", 0o000)
    return f"enrichers:\n  classifier: {{model: {model}}}\n", "cannot be read"


def _dev_zero(home: Path) -> tuple[str, str]:
    return "enrichers:\n  classifier: {model: /dev/zero}\n", "not under the models root"


def _fifo_in_the_root(home: Path) -> tuple[str, str]:
    os.mkfifo(home / "models" / "zero.skops")
    return f"enrichers:\n  classifier: {{model: {home / 'models' / 'zero.skops'}}}\n", "not a regular file"


def _alias_bomb(home: Path) -> tuple[str, str]:
    return BOMB, "anchors and aliases are not allowed"


@pytest.mark.parametrize("bad", [_unreadable_folder, _dev_zero, _fifo_in_the_root, _alias_bomb],
                         ids=["unreadable-model-folder", "model-dev-zero", "model-a-fifo", "alias-bomb-in-trusted-types"])
def test_a_bad_enrichment_file_loads_the_code_location_and_fails_the_enrichment_clearly(home, bad) -> None:
    text, problem = bad(home)
    config = home / "enrichment.yaml"
    config.write_text(text)
    os.chmod(config, 0o644)
    out = _in_child(_load_and_enrich, unprivileged=bad is _unreadable_folder)
    assert "error" not in out, f"the code location did not load: {out.get('error')}\n{out.get('trace', '')}"
    assert out["sync_job"] == "x_sync_no_index" and out["normalized"], "the syncs are in the code location"
    assert not out["enrich_ok"], "the enrichment step fails"
    [message] = out["failures"]
    assert str(config) in message and "classifier" in message and problem in message, message
