"""Bench: a large source registry (10,000 and 50,000 X entries) as the sensors, a run and each CLI command read it,
beside the earlier way of reading it (the named peer: ruamel.yaml's round trip, which every CLI command paid
before issue 30, item 15, and PyYAML's loader over libyaml plus a full validation, the sensors' earlier parse).

Printed per size, seconds of wall time and of CPU time (the process's own, or the command's child process: steadier
than wall time on a shared machine):
  sensors   cold (nothing cached in memory or on disk: parse + validate every entry), after one entry changed
            (a sensor's next tick: parse, validate only the changed entry), unchanged (cached);
  run       a new run process (the JSON snapshot, every entry validated again; with ``--pg`` no snapshot: the
            instance on Postgres keeps nothing on a local disk);
  CLI       each command as a user runs it, a whole process (``crawl-assets sources list / show / pause /
            resume / add / remove``), beside ``sources list`` of an empty registry (the process and its imports);
  peer      the file read by ruamel's round-trip loader and written back (what each CLI command did), and read
            by ``yaml.load`` with PyYAML's C loader then validated (the sensors' earlier cold parse).
The peer runs at 10,000 entries unless ``--peer-all`` (its round trip takes minutes at 50,000).

    python bench/registry.py [--sizes 10000,50000] [--peer-all] [--pg postgresql+psycopg2://postgres@127.0.0.1:5432/postgres]
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def registry_text(n: int) -> str:
    lines = ["# bench registry", "sources:"]
    for i in range(n):
        lines += [f"  - name: s{i:05d}", "    tenant: bench", "    platform: x", "    kind: account_timeline",
                  f"    identifier: account_{i}", "    policy: {interval_minutes: 60}", "    options: {max_results: 100}"]
    return "\n".join(lines) + "\n"


def timed(fn) -> tuple[float, float]:
    """(wall, CPU) seconds of ``fn()`` in this process."""
    started, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - started, time.process_time() - cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli(registry: str, *args: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``crawl-assets`` process (it must succeed)."""
    cmd = [sys.executable, "-m", "crawl_assets.cli.main", *args]
    if args and args[0] == "sources":
        cmd += ["--registry", registry]
    started, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    took = time.perf_counter() - started, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {done.stderr[-500:]}")
    return took


class Store:
    """Where the bench registry lives: a file (``--pg`` not given) or a row of the Postgres registry."""

    def __init__(self, tmp: Path, n: int, pg: str | None):
        self.n, self.pg = n, pg
        self.location: str = f"postgres:bench-{n}-{os.getpid()}" if pg else str(tmp / f"sources-{n}.yaml")

    def write(self, text: str) -> None:
        from crawl_assets.registry.storage import storage_of

        store = storage_of(self.location)
        store.write(text.encode(), store.read().version)

    def drop(self) -> None:
        """Delete the bench's row (a file goes with the temporary folder)."""
        if self.pg:
            from crawl_assets.registry.storage import TABLE, storage_of

            store = storage_of(self.location)
            store._query(f"DELETE FROM {TABLE} WHERE name = %s RETURNING name", (store.name,))  # type: ignore[attr-defined]

    def read(self) -> str:
        from crawl_assets.registry.storage import storage_of

        data = storage_of(self.location).read().data
        assert data is not None
        return data.decode()


def sensors_and_run(store: Store) -> dict[str, tuple[float, float]]:
    from crawl_assets.registry import validate
    from crawl_assets.registry import store as view

    def cold() -> None:
        view._cache.clear()
        validate._memo = {}

    out: dict[str, tuple[float, float]] = {}
    for snapshot in view.settings.dagster_home().glob("cache/registry-*.json"):
        snapshot.unlink()
    cold()
    out["sensors, cold"] = timed(lambda: view.registry_view(store.location))
    text = store.read()
    store.write(text.replace("identifier: account_7\n", "identifier: account_7b\n", 1))
    out["sensors, one entry changed"] = timed(lambda: view.registry_view(store.location))
    out["sensors, unchanged"] = timed(lambda: view.registry_view(store.location))
    cold()  # a new process: the snapshot on disk (SQLite instance, file registry), nothing in memory
    out["new run process"] = timed(lambda: view.registry_view(store.location))
    store.write(text)
    return out


def peer(store: Store) -> dict[str, tuple[float, float]]:
    import yaml

    from crawl_assets.registry.validate import validate_entries
    from crawl_assets.registry.yaml_safe import roundtrip

    def round_trip() -> None:
        y = roundtrip()
        doc = y.load(store.read())
        y.dump(doc, io.StringIO())

    def libyaml_and_validate() -> None:
        from crawl_assets.registry import validate

        validate._memo = {}
        doc = yaml.load(store.read(), Loader=yaml.CSafeLoader)
        validate_entries(store.location, doc["sources"], lambda i, loc: None)

    return {"peer: ruamel round trip (each CLI command before)": timed(round_trip),
            "peer: PyYAML C loader + validation (sensors before, cold)": timed(libyaml_and_validate)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--peer-all", action="store_true")
    parser.add_argument("--pg", default=None, help="an instance database URL: the registry is then a row of the "
                        "Postgres registry (postgres:<name>) and the instance is on Postgres (no snapshot on disk)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-registry-") as tmp:
        os.environ["DAGSTER_HOME"] = tmp
        os.environ.pop("DAGSTER_PG_URL", None)
        os.environ.pop("DAGSTER_PG_HOST", None)
        if args.pg:
            os.environ["DAGSTER_PG_URL"] = args.pg
        rows: dict[str, dict[int, tuple[float, float]]] = {}
        empty = Path(tmp) / "empty.yaml"
        empty.write_text("sources: []\n")
        for n in sizes:
            store = Store(Path(tmp), n, args.pg)
            text = registry_text(n)
            store.write(text)
            registry = store.location
            print(f"{n:,} entries: {len(text) / 2**20:.1f} MiB in {registry}; load average {os.getloadavg()[0]:.1f}",
                  flush=True)
            figures = sensors_and_run(store)
            key = f"bench.x.s{n // 2:05d}"
            figures["CLI: sources list, empty registry (process + imports)"] = cli(str(empty), "sources", "list")
            figures["CLI: sources list"] = cli(registry, "sources", "list")
            figures["CLI: sources show"] = cli(registry, "sources", "show", key)
            figures["CLI: sources pause"] = cli(registry, "sources", "pause", key, "--reason", "bench")
            figures["CLI: sources resume"] = cli(registry, "sources", "resume", key)
            figures["CLI: sources add"] = cli(registry, "sources", "add", "--platform", "x", "--kind",
                                              "account_timeline", "--identifier", "added", "--name", "added",
                                              "--tenant", "bench")
            figures["CLI: sources remove"] = cli(registry, "sources", "remove", "bench.x.added")
            if n == sizes[0] or args.peer_all:
                figures.update(peer(store))
            store.drop()
            for label, seconds in figures.items():
                rows.setdefault(label, {})[n] = seconds
        print(f"load average at the end {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
        print(f"\n{'seconds, wall / CPU':<60}" + "".join(f"{f'{n:,} entries':>18}" for n in sizes))
        for label, by_size in rows.items():
            cells = (f"{f'{by_size[n][0]:.2f} / {by_size[n][1]:.2f}':>18}" if n in by_size else f"{'-':>18}" for n in sizes)
            print(f"{label:<60}" + "".join(cells))


if __name__ == "__main__":
    main()
