"""The names an instance keeps history under never change (``dagster_names.py``): asset keys, checks,
partitions definitions, pools, ops, jobs, sensors, schedules and resource keys, with and without a cluster
(the index asset's checks exist only with one). ``UPDATE_NAMES=1`` rewrites the baseline: only for a
deliberate, announced rename."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BASELINE = Path(__file__).with_name("dagster_names.json")


def _inventory(env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-m", "crawl_assets_tests.contract.dagster_names"], env=env,
                         capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[2])
    return json.loads(out.stdout)


@pytest.mark.parametrize("cluster", ["no-cluster", "cluster"])
def test_history_names_are_the_recorded_ones(cluster):
    env = {**os.environ}
    if cluster == "cluster":
        env["CRAWL_ES_URL"] = "http://127.0.0.1:9"  # configured, never contacted
    got = _inventory(env)
    baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
    if os.environ.get("UPDATE_NAMES"):
        baseline[cluster] = got
        BASELINE.write_text(json.dumps(baseline, indent=1, sort_keys=True) + "\n")
    installed, recorded = _platforms(got), _platforms(baseline[cluster])
    expected = _installed_only(baseline[cluster], installed)
    known = _installed_only(got, recorded)  # a platform added since the baseline only adds names
    for section in ("assets", "jobs", "sensors", "schedules", "resources"):
        assert known[section] == expected[section], section


def _platforms(inventory: dict) -> set[str]:
    """The platforms these definitions were built for (each has a ``<platform>_sources`` partitions def)."""
    return {a["partitions"].removesuffix("_sources") for a in inventory["assets"].values() if a["partitions"]}


def _installed_only(expected: dict, installed: set[str]) -> dict:
    """The baseline without the names of platforms not installed here (a source type may be uninstalled;
    its names are then absent, never renamed); applied to the current names with the baseline's platforms,
    the names of the platforms installed since the baseline was recorded are left out instead."""
    everyone = _platforms(expected)

    def mine(name: str) -> bool:
        owner = next((p for p in everyone if name == p or name.startswith((f"{p}/", f"{p}_"))), None)
        return owner is None or owner in installed

    return {
        "assets": {k: {**v, "deps": [d for d in v["deps"] if mine(d)]} for k, v in expected["assets"].items() if mine(k)},
        "jobs": {k: {**v, "ops": [o for o in v["ops"] if mine(o)],
                     "op_config": {o: c for o, c in v.get("op_config", {}).items() if mine(o)}}
                 for k, v in expected["jobs"].items() if mine(k)},
        "sensors": {k: {**v, "jobs": [j for j in v["jobs"] if mine(j)]} for k, v in expected["sensors"].items() if mine(k)},
        "schedules": expected["schedules"],
        "resources": [r for r in expected["resources"] if mine(r)],
    }
