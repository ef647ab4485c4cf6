"""Build our analysis plugin (``analysis_plugin/src``) against the distribution's own jars.

Why it exists: the test distribution lacks the ``analysis-common`` module that every real Elasticsearch
distribution ships, and our index templates use its ``mapping`` char filter, its ``decimal_digit``,
``arabic_normalization``, ``persian_normalization`` and ``asciifolding`` token filters and its
``english`` analyzer. The plugin registers exactly those names over the genuine Lucene classes (the
ones analysis-common wraps), so the Persian analyzer under test is Lucene's. See the Java sources.

The build is cached by the hash of the sources and the distribution: ``javac`` runs once per change.
It is a classic plugin (``plugin-descriptor.properties`` pinned to the distribution's version), compiled
for the Java release the distribution's own classes target (17 for 8.x, 21 for 9.x).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from crawl_assets.index.local_node.distribution import Unavailable, _publish, cache_lock, cache_root

SOURCES = Path(__file__).with_name("analysis_plugin") / "src"
CLASSNAME = "org.crawlassets.testanalysis.CrawlTestAnalysisPlugin"
DESCRIPTOR = """description=crawl_assets: the analysis-common components our templates use, over Lucene
version=1.0.0
name=crawl-test-analysis
classname={classname}
java.version={java}
elasticsearch.version={version}
"""


def _source_files() -> list[Path]:
    return sorted(SOURCES.rglob("*.java"))


def source_hash(dist: Path) -> str:
    digest = hashlib.sha256(dist.name.encode())
    for path in _source_files():
        digest.update(path.relative_to(SOURCES).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _version(dist: Path) -> str:
    return _server_jar(dist).stem.removeprefix("elasticsearch-")


def java_release(dist: Path) -> int:
    """The Java release of the server's classes (class file major version - 44)."""
    with zipfile.ZipFile(_server_jar(dist)) as jar:
        header = jar.read("org/elasticsearch/Version.class")[:8]
    return int.from_bytes(header[6:8], "big") - 44


def _server_jar(dist: Path) -> Path:
    [server] = sorted((dist / "lib").glob("elasticsearch-[0-9]*.jar"))
    return server


def build(dist: Path, java_home: Path) -> Path:
    """The plugin folder (jar + descriptor) for this distribution, compiled when not cached yet."""
    root = cache_root()
    final = root / f"plugin-{source_hash(dist)}"
    if (final / "plugin-descriptor.properties").exists():
        return final
    with cache_lock(root):
        if (final / "plugin-descriptor.properties").exists():
            return final
        work = Path(tempfile.mkdtemp(prefix=".plugin-", dir=root))
        try:
            classes = work / "classes"
            classes.mkdir()
            classpath = os.pathsep.join(str(p) for p in sorted((dist / "lib").glob("*.jar")))
            release = str(java_release(dist))
            cmd = [str(java_home / "bin" / "javac"), "--release", release, "-proc:none", "-nowarn", "-encoding", "UTF-8",
                   "-cp", classpath, "-d", str(classes), *map(str, _source_files())]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                raise Unavailable(f"javac failed on the test analysis plugin: {(done.stderr or done.stdout)[-2000:]}")
            out = work / "out"
            out.mkdir()
            os.chmod(out, 0o755)  # readable by the user the node runs as, whatever the umask
            with zipfile.ZipFile(out / "crawl-test-analysis.jar", "w", zipfile.ZIP_DEFLATED) as jar:
                jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
                for path in sorted(classes.rglob("*.class")):
                    jar.write(path, path.relative_to(classes).as_posix())
            (out / "plugin-descriptor.properties").write_text(
                DESCRIPTOR.format(classname=CLASSNAME, version=_version(dist), java=release), "utf-8")
            for path in out.iterdir():
                os.chmod(path, 0o644)
            _publish(out, final)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return final
