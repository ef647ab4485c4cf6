"""``crawl-assets es local`` where what it needs is missing: one line naming what to install, exit 2.
(Starting it, indexing the demo into it, querying and stopping it: the README's commands, run by
``crawl_assets_tests/docs/test_commands.py``.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def es_local(tmp_path: Path, path: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "ES_JAVA_HOME")}
    return subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", "es", "local", "--port", "1",
                           "--data", str(tmp_path / "es")], capture_output=True, text=True, timeout=120,
                          env={**base, "PATH": path, **env})


def test_without_java_it_says_what_to_install(tmp_path):
    (tmp_path / "jvm").mkdir()  # no JDK in the system's JVM folder either
    done = es_local(tmp_path, str(Path(sys.executable).parent), CRAWL_TEST_JVM_DIR=str(tmp_path / "jvm"))
    assert done.returncode == 2, done.stderr
    assert "no Java found" in done.stderr and "JDK 17+" in done.stderr and "Maven" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_maven_and_the_server_not_fetched_yet_it_says_so(tmp_path):
    java = shutil.which("java")
    if java is None or not (Path(os.path.realpath(java)).parent / "javac").exists():
        pytest.skip("no JDK here")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "java").symlink_to(os.path.realpath(java))
    done = es_local(tmp_path, f"{bin_dir}:{Path(sys.executable).parent}", CRAWL_TEST_M2_REPO=str(tmp_path / "m2"))
    assert done.returncode == 2, done.stderr
    assert "Maven (mvn) is needed to fetch org.elasticsearch.distribution.integ-test-zip" in done.stderr
    assert "apt-get install maven" in done.stderr and "Traceback" not in done.stderr
