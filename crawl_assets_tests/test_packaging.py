"""A wheel install (the Dockerfile's `pip install ".[k8s]"`) ships every data file the package uses."""

import subprocess
import sys
import zipfile

from crawl_assets_tests.conftest import REPO


def test_wheel_contains_every_tracked_package_file(tmp_path):
    tracked = subprocess.run(["git", "ls-files", "crawl_assets"], cwd=REPO, capture_output=True, text=True, check=True)
    wanted = {p for p in tracked.stdout.split() if not p.endswith(".py")}
    if not wanted:  # not a git checkout: nothing to compare against
        return
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "-w", str(tmp_path), str(REPO)], check=True, timeout=300, capture_output=True)
    [wheel] = list(tmp_path.glob("*.whl"))
    shipped = set(zipfile.ZipFile(wheel).namelist())
    assert wanted <= shipped, f"missing from the wheel: {sorted(wanted - shipped)}"
