"""The import-linter contracts of ``pyproject.toml`` (the layers and what each may import) hold: the same
check ``.ci/run`` makes with ``lint-imports``, run here so the README's ``python -m pytest`` makes it too.
And they bite: without its explained ignore lines, the Dagster contract reports exactly the modules those lines
name (the credential resources of ``sources/`` and ``sdk/``)."""

from __future__ import annotations

import json
import re
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


def _lint_without_ignores(tmp_path: Path, ids: set[str]) -> str:
    """``lint-imports`` on the contracts ``ids`` alone, their ignore lines dropped; the contracts must break,
    and the report is returned on one line."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    strict = {c["id"]: c for c in config["contracts"] if c["id"] in ids}
    assert set(strict) == ids
    for contract in strict.values():
        contract["ignore_imports"] = []
    path = tmp_path / "contracts.toml"
    path.write_text(_toml({**config, "contracts": list(strict.values())}))
    result = subprocess.run([_lint(), "--no-cache", "--config", str(path)], cwd=REPO, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode != 0, result.stdout[-3000:]
    return " ".join(result.stdout.split())


def test_no_arrow_points_up_the_layers():
    """Every layer exception is gone (issue 17): the layers contract excuses nothing."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["id"] == "layers")
    assert layers.get("ignore_imports", []) == []


def test_only_the_credential_resources_import_dagster(tmp_path):
    out = _lint_without_ignores(tmp_path, {"dagster-at-the-edge"})
    reported = set(re.findall(r"(crawl_assets\.(?:sources|sdk)\.[\w.]+) -> dagster\b", out))
    assert reported == {"crawl_assets.sdk.rest_resource", "crawl_assets.sdk.tenant_secrets",
                        "crawl_assets.sources.telegram.resource", "crawl_assets.sources.x.resource"}, out[-3000:]
