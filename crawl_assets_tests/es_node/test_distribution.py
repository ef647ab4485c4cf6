"""Which JDK runs the node: the oldest adequate one for the server line, found in the system's JVM folder
when the default Java is too old (a 9.x node needs 21+ beside a default 17)."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from crawl_assets.index.local_node import analysis_plugin, distribution
from crawl_assets.index.local_node.distribution import Unavailable


def fake_jdk(root: Path, name: str, major: int, javac: bool = True) -> Path:
    home = root / name
    (home / "bin").mkdir(parents=True)
    tools = ["java", "javac"] if javac else ["java"]
    for tool in tools:
        script = home / "bin" / tool
        script.write_text(f'#!/bin/sh\necho \'openjdk version "{major}.0.1" 2025-01-01\' >&2\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return home


@pytest.fixture
def jvm_dir(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "jvm"
    root.mkdir()
    for var in ("ES_JAVA_HOME", "JAVA_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # no java on PATH: only what the test lays out
    monkeypatch.setenv("CRAWL_TEST_JVM_DIR", str(root))
    distribution._java_major.cache_clear()
    yield root
    distribution._java_major.cache_clear()


def test_each_line_gets_the_oldest_jdk_it_runs_on(jvm_dir, monkeypatch):
    fake_jdk(jvm_dir, "java-17-openjdk-amd64", 17)
    fake_jdk(jvm_dir, "temurin-25-jdk-amd64", 25)
    fake_jdk(jvm_dir, "jre-21", 21, javac=False)  # a JRE cannot compile the test plugin
    assert distribution.java_home("8.19.21").name == "java-17-openjdk-amd64"
    assert distribution.java_home("9.2.0").name == "temurin-25-jdk-amd64"
    monkeypatch.setenv("JAVA_HOME", str(jvm_dir / "temurin-25-jdk-amd64"))  # asked for first, adequate for both
    assert distribution.java_home("8.19.21").name == "temurin-25-jdk-amd64"


def test_no_adequate_jdk_is_a_one_line_reason_naming_what_was_found(jvm_dir):
    fake_jdk(jvm_dir, "java-17-openjdk-amd64", 17)
    with pytest.raises(Unavailable, match=r"9\.2\.0 needs a JDK 21\+.*java-17-openjdk-amd64") as info:
        distribution.java_home("9.2.0")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("major", "release"), [(61, 17), (65, 21)])
def test_the_plugin_targets_the_release_of_the_servers_classes(tmp_path, major, release):
    dist = tmp_path / "dist"
    (dist / "lib").mkdir(parents=True)
    with zipfile.ZipFile(dist / "lib" / "elasticsearch-9.9.9.jar", "w") as jar:
        jar.writestr("org/elasticsearch/Version.class", b"\xca\xfe\xba\xbe\x00\x00" + major.to_bytes(2, "big"))
    assert analysis_plugin.java_release(dist) == release
