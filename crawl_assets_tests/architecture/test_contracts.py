"""The import-linter contracts of ``pyproject.toml`` (the layers and what each may import) hold: the same
check ``.ci/run`` makes with ``lint-imports``, run here so the README's ``python -m pytest`` makes it too.
And they bite: without their explained ignore lines, they report exactly the arrows those lines name."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _lint() -> str:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert lint, "import-linter is a dev dependency: pip install -e '.[dev]'"
    return lint


def test_import_contracts_are_kept():
    result = subprocess.run([_lint(), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def _toml(config: dict) -> str:
    """``[tool.importlinter]`` back as TOML (JSON strings, lists and booleans are TOML values)."""
    head = {k: v for k, v in config.items() if k != "contracts"}
    lines = ["[tool.importlinter]", *(f"{k} = {json.dumps(v)}" for k, v in head.items())]
    for contract in config["contracts"]:
        lines += ["", "[[tool.importlinter.contracts]]", *(f"{k} = {json.dumps(v)}" for k, v in contract.items())]
    return "\n".join(lines) + "\n"


def test_the_layer_and_platform_contracts_report_the_arrows_their_ignore_lines_excuse(tmp_path):
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    strict = {c["id"]: c for c in config["contracts"] if c["id"] in {"layers", "platforms-independent"}}
    assert set(strict) == {"layers", "platforms-independent"}
    for contract in strict.values():  # keep only the lines letting platforms use the shared modules
        contract["ignore_imports"] = [i for i in contract.get("ignore_imports", []) if i.startswith("crawl_assets.sources.** ->")]
    path = tmp_path / "contracts.toml"
    path.write_text(_toml({**config, "contracts": list(strict.values())}))
    result = subprocess.run([_lint(), "--no-cache", str(path)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0, result.stdout[-3000:]
    out = " ".join(result.stdout.split())
    for arrow in ("crawl_assets.sources.common -> crawl_assets.orchestration.monitoring.health",
                  "crawl_assets.lake.landing -> crawl_assets.sources.envelope"):
        assert arrow in out, arrow
