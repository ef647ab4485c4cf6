import subprocess
import sys
from pathlib import Path

import dagster as dg

from crawl_assets_tests.conftest import REPO


def test_packaged_instance_yaml_equals_repository_copy():
    assert (REPO / "dagster.yaml").read_text() == (REPO / "crawl_assets" / "instance" / "dagster.yaml").read_text()



def test_a_dagster_yaml_naming_the_old_module_still_loads(dagster_home: Path):
    """Instances set up before ``crawl_assets/instance/`` name ``crawl_assets.instance_storage``: it still loads,
    as the same storage; the shipped config names the new path."""
    yaml = dagster_home / "dagster.yaml"
    text = yaml.read_text()
    assert "module: crawl_assets.instance.storage\n" in text
    yaml.write_text(text.replace("module: crawl_assets.instance.storage\n", "module: crawl_assets.instance_storage\n"))
    with dg.DagsterInstance.get() as instance:
        assert type(instance.run_storage).__name__ == "SqliteRunStorage"
        assert instance.run_storage is not None and (dagster_home / "storage").is_dir()
        assert type(instance.event_log_storage).__name__ == "_EventLogStorage"  # ours, not Dagster's default


def test_sqlite_by_default_with_one_run_per_partition_and_run_retries(dagster_home: Path):
    with dg.DagsterInstance.get() as instance:
        assert type(instance.run_storage).__name__ == "SqliteRunStorage"
        assert (dagster_home / "storage").is_dir()
        limits = instance.get_concurrency_config().run_queue_config.tag_concurrency_limits
        assert {"key": "dagster/partition", "value": {"applyLimitPerUniqueValue": True}, "limit": 1} in limits
        assert instance.run_retries_enabled and not instance.run_retries_retry_on_asset_or_op_failure


def test_postgres_when_configured(dagster_home: Path, pg_url: str, monkeypatch):
    monkeypatch.setenv("DAGSTER_PG_URL", pg_url)
    with dg.DagsterInstance.get() as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"

        @dg.asset
        def probe() -> int:
            return 1

        result = dg.materialize([probe], instance=instance)
        assert result.success
    # A second process sees the run: it is in Postgres, not in local files.
    code = (
        "import dagster as dg; i = dg.DagsterInstance.get(); "
        f"print([r.run_id for r in i.get_runs()].count({result.run_id!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip().endswith("1")
    assert not (dagster_home / "storage" / "runs.db").exists()


def test_ui_shows_no_first_visit_community_dialog(dagster_home: Path):
    """The webserver asks ``shouldShowNux`` (``instance.nux_enabled`` and no ``.nux/nux.yaml`` yet) before showing
    "Join the Dagster community"; the shipped config turns it off, as it does telemetry."""
    with dg.DagsterInstance.get() as instance:
        assert instance.nux_enabled is False
        assert instance.telemetry_enabled is False


def test_the_sqlite_event_log_keeps_one_engine_per_shard(dagster_home: Path):
    """Not a new SQLAlchemy engine (and its dialect set-up) for each event written or read."""
    import sqlalchemy as sa

    engines: list[int] = []

    def connected(conn) -> None:
        if "/history/runs/" in str(conn.engine.url.database):
            engines.append(id(conn.engine))

    @dg.asset
    def probe() -> int:
        return 1

    with dg.DagsterInstance.get() as instance:
        sa.event.listen(sa.engine.Engine, "engine_connect", connected)
        try:
            result = dg.materialize([probe], instance=instance)
            assert result.success and len(instance.all_logs(result.run_id)) >= 10
            records = instance.fetch_materializations(probe.key, limit=1).records
            assert records and records[0].run_id == result.run_id
        finally:
            sa.event.remove(sa.engine.Engine, "engine_connect", connected)
    assert len(engines) >= 20, "every event is written through a connection"
    assert len(set(engines)) <= 2, f"{len(set(engines))} engines for the run's shard and the index shard"


def test_a_runs_new_event_log_shard_is_dagsters_own_with_the_migration_scripts_read_once(tmp_path: Path, monkeypatch):
    """A run's shard is made as Dagster makes it (same tables and indices, WAL, stamped at the head revision),
    but the migration scripts (88 files, compiled from source on each read) are read once per process, not
    twice for each run."""
    import sqlite3

    from alembic.script import ScriptDirectory

    from crawl_assets.instance import storage

    dagsters_class = storage._EventLogStorage.__mro__[1]  # Dagster's SqliteEventLogStorage
    assert dagsters_class.__name__ == "SqliteEventLogStorage"

    storage.event_log_migrations.cache_clear()
    reads: list[object] = []
    real = ScriptDirectory.from_config.__func__
    monkeypatch.setattr(ScriptDirectory, "from_config", classmethod(lambda cls, cfg: reads.append(cfg) or real(cls, cfg)))
    ours = storage._EventLogStorage(str(tmp_path / "ours") + "/")
    reads.clear()  # creating the index shard goes through Dagster's own path
    for run in ("run-a", "run-b", "run-c"):
        with ours._connect(run):
            pass
    assert len(reads) == 1, f"the migration scripts were read {len(reads)} times for three new run shards"
    dagsters = dagsters_class(str(tmp_path / "dagster") + "/")
    with dagsters._connect("run-a"):
        pass

    def shape(path: Path) -> tuple:
        with sqlite3.connect(path) as conn:
            return (sorted(conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()),
                    conn.execute("SELECT version_num FROM alembic_version").fetchall(),
                    conn.execute("PRAGMA journal_mode").fetchall())

    assert shape(tmp_path / "ours" / "run-a.db") == shape(tmp_path / "dagster" / "run-a.db")
    assert shape(tmp_path / "ours" / "run-c.db")[2] == [("wal",)]
    ours.dispose()
    dagsters.dispose()
