"""The genuine Elasticsearch server distribution for the tests and ``crawl-assets es local``: resolved from Maven
Central once, unpacked once.

``org.elasticsearch.distribution.integ-test-zip:elasticsearch:{version}:zip`` is Elastic's own server
distribution (the one their integration tests run) with the modules transport-netty4, x-pack-core,
x-pack-security and apm. Maven puts it in the local repository (``~/.m2``); it is unpacked into a cache
folder keyed by version and the zip's SHA-256, readable by every user (the node may run as ``nobody``),
and a node home is that tree hard-linked plus our analysis plugin (``analysis_plugin.py``).

Everything here is idempotent and safe to run from several processes at once (a file lock, then atomic
renames): the first test session on a machine pays ~2 s of unpacking, later ones nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from crawl_assets import settings

ES_VERSION = settings.local_node().version
GROUP = "org.elasticsearch.distribution.integ-test-zip"


class Unavailable(RuntimeError):
    """What a real node needs is missing here (Java, Maven, the artifact); the message is one line."""


def artifact(version: str = ES_VERSION) -> str:
    return f"{GROUP}:elasticsearch:{version}:zip"


def cache_root() -> Path:
    """``$CRAWL_TEST_ES_CACHE`` or ``/var/tmp/crawl-assets-es`` (per user when the shared one is not ours)."""
    configured = settings.local_node().cache
    root = Path(configured) if configured else Path("/var/tmp/crawl-assets-es")
    try:
        root.mkdir(mode=0o755, parents=True, exist_ok=True)
        if root.stat().st_uid == os.getuid():
            os.chmod(root, 0o755)  # the node's user must reach it, whatever the umask
        if os.access(root, os.W_OK | os.X_OK):
            return root
    except OSError:
        pass
    if configured:
        raise Unavailable(f"CRAWL_TEST_ES_CACHE={configured} is not a writable folder")
    mine = Path(f"/var/tmp/crawl-assets-es-{os.getuid()}")
    mine.mkdir(mode=0o755, parents=True, exist_ok=True)
    os.chmod(mine, 0o755)
    return mine


@contextlib.contextmanager
def cache_lock(root: Path) -> Iterator[None]:
    with open(root / ".lock", "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def major(version: str = ES_VERSION) -> int:
    return int(version.split(".")[0])


def required_java(version: str = ES_VERSION) -> int:
    """The oldest Java the server line runs on: 17 for 8.x, 21 from 9.0."""
    return 21 if major(version) >= 9 else 17


@functools.lru_cache(maxsize=None)
def _java_major(home: Path) -> tuple[int, str]:
    out = subprocess.run([str(home / "bin" / "java"), "-version"], capture_output=True, text=True, timeout=60)
    first = (out.stderr or out.stdout).splitlines()[0] if (out.stderr or out.stdout) else ""
    number = first.split('"')[1].split(".")[0] if '"' in first else ""
    return (int(number) if number.isdigit() else 0), first


def _candidates() -> list[Path]:
    """JDK homes in order of preference: ``$ES_JAVA_HOME``, ``$JAVA_HOME``, the ``java`` on PATH, then every
    JDK of the system's JVM folder (oldest first: the default line stays on the Java it always ran on)."""
    configured = settings.local_node()
    found = [Path(home) for home in configured.java_homes]
    java = shutil.which("java", path=configured.path)
    if java:
        found.append(Path(os.path.realpath(java)).parent.parent)
    system = Path(configured.jvm_dir)
    if system.is_dir():
        found.extend(sorted(p for p in system.iterdir() if p.is_dir() and not p.is_symlink()))
    unique: list[Path] = []
    for home in found:
        if (home / "bin" / "java").exists() and home.resolve() not in {u.resolve() for u in unique}:
            unique.append(home)
    return unique


def java_home(version: str = ES_VERSION) -> Path:
    """A JDK home new enough for ``version`` (17+ for 8.x, 21+ for 9.x), from the candidates above: the node
    alone gets it (``ES_JAVA_HOME``), the caller's own Java stays what it is."""
    need = required_java(version)
    seen: list[str] = []
    for home in _candidates():
        number, first = _java_major(home)
        seen.append(f"{home} ({first or 'unknown'})")
        if number < need:
            continue
        if not (home / "bin" / "javac").exists():
            seen[-1] += " is a JRE without javac"
            continue
        return home
    if not seen:
        raise Unavailable(f"no Java found (install a JDK {need}+ or set ES_JAVA_HOME)")
    raise Unavailable(f"Elasticsearch {version} needs a JDK {need}+ (our analysis plugin is compiled); "
                      f"found: {'; '.join(seen)}")


def local_repository() -> Path:
    return Path(settings.local_node().maven_repository or Path.home() / ".m2" / "repository")


def resolve_zip(version: str = ES_VERSION) -> Path:
    """The distribution zip in the local Maven repository, fetched by Maven when it is not there yet."""
    path = local_repository() / GROUP.replace(".", "/") / "elasticsearch" / version / f"elasticsearch-{version}.zip"
    if not path.exists():
        mvn = shutil.which("mvn")
        if not mvn:
            raise Unavailable(f"Maven (mvn) is needed to fetch {artifact(version)} into {local_repository()}")
        cmd = [mvn, "-q", "-B", "dependency:get", f"-Dartifact={artifact(version)}", "-Dtransitive=false",
               f"-Dmaven.repo.local={local_repository()}"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0 or not path.exists():
            tail = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["(no output)"]
            raise Unavailable(f"Maven could not resolve {artifact(version)}: {tail[0][:300]}")
    check_sha1(path)
    return path


def check_sha1(path: Path) -> None:
    """Maven's ``.sha1`` next to the zip, when present, must match (a truncated download is not used)."""
    sidecar = path.with_name(path.name + ".sha1")
    if not sidecar.exists():
        return
    want = sidecar.read_text().split()[0].strip().lower()
    got = file_digest(path, "sha1")
    if got != want:
        raise Unavailable(f"{path} does not match its .sha1 ({got} != {want}); delete it and run again")


def file_digest(path: Path, algorithm: str = "sha256") -> str:
    digest = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _extract(zip_path: Path, target: Path) -> None:
    """Unzip keeping the executable bits (``zipfile`` alone drops them); files 0644/0755, folders 0755."""
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            out = zf.extract(info, target)
            if info.is_dir():
                os.chmod(out, 0o755)
            else:
                mode = (info.external_attr >> 16) & 0o777
                os.chmod(out, 0o755 if mode & 0o111 else 0o644)
    for folder, _, _ in os.walk(target):  # folders the zip has no entry for were made under the umask
        os.chmod(folder, 0o755)


def _publish(build: Path, final: Path) -> None:
    """Move a finished build folder into place (another process may have won the race: keep theirs)."""
    try:
        os.rename(build, final)
    except OSError:
        shutil.rmtree(build, ignore_errors=True)
        if not final.exists():
            raise


def unpacked(zip_path: Path, version: str = ES_VERSION) -> Path:
    """The distribution's folder (``bin``, ``lib``, ``modules``, ``config``) in the cache."""
    root = cache_root()
    final = root / f"dist-{version}-{file_digest(zip_path)[:16]}"
    if (final / "lib").is_dir():
        return final
    with cache_lock(root):
        if not (final / "lib").is_dir():
            build = Path(tempfile.mkdtemp(prefix=".unpack-", dir=root))
            _extract(zip_path, build)
            [top] = [p for p in build.iterdir() if p.is_dir()]
            os.chmod(top, 0o755)
            _publish(top, final)
            shutil.rmtree(build, ignore_errors=True)
    return final


def node_home(dist: Path, plugin_dir: Path) -> Path:
    """A node home: the distribution hard-linked (no copy), with ``plugins/`` holding ``plugin_dir``."""
    root = cache_root()
    final = root / f"home-{dist.name.removeprefix('dist-')}-{plugin_dir.name}"
    if (final / "plugins" / "crawl-test-analysis").is_dir():
        return final
    with cache_lock(root):
        if not (final / "plugins" / "crawl-test-analysis").is_dir():
            build = Path(tempfile.mkdtemp(prefix=".home-", dir=root))
            os.chmod(build, 0o755)
            shutil.copytree(dist, build / "h", copy_function=os.link, symlinks=True)
            shutil.copytree(plugin_dir, build / "h" / "plugins" / "crawl-test-analysis")
            _publish(build / "h", final)
            shutil.rmtree(build, ignore_errors=True)
    return final
