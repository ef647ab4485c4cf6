"""Configuration from the environment, read in one place: nothing else in the package reads or writes
``os.environ``. Entry points call ``Settings.from_env()`` once and pass the values down; the module-level
functions read one value when called. Every path has a default under ``DAGSTER_HOME`` (docs/OPERATIONS.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any


DEFAULT_HOME = ".crawl_home"


@dataclass(frozen=True)
class ElasticsearchSettings:
    """The cluster settings as set (``CRAWL_ES_*``; ``CRAWL_ES_URL``: comma-separated hosts). The definitions hand
    the credentials to Dagster as ``EnvVar``s (their values stay out of run config); the CLI uses them directly."""

    url: str = ""
    api_key: str = ""
    username: str = ""
    password: str = ""
    ca_certs: str = ""
    verify_certs: bool = True

    def host_list(self, url: str | None = None, default: str = "") -> list[str]:
        """The hosts of ``url`` if given, else the configured ones, else ``default``'s."""
        return [h.strip() for h in (url or self.url or default).split(",") if h.strip()]


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    value = env.get(name)
    if not value:
        return default
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"environment variable {name}: expected a number, got {value!r}") from None


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("DAGSTER_HOME") or DEFAULT_HOME).resolve()


def _lake(env: Mapping[str, str]) -> str:
    return env.get("CRAWL_LAKE") or str(_home(env) / "lake")


def is_remote(location: str | os.PathLike[str]) -> bool:
    """Whether a registry location is not a local file: a URL (``s3://bucket/key``; the registry refuses other
    schemes) or ``postgres[:name]`` (a row in the instance's database)."""
    text = str(location)
    return "://" in text or text == "postgres" or text.startswith("postgres:")


def registry_location(value: str | os.PathLike[str]) -> Path | str:
    """A registry location as configured: a remote one stays text, a local file is made absolute."""
    return str(value) if is_remote(value) else Path(str(value)).resolve()


def _registry(env: Mapping[str, str]) -> Path | str:
    value = env.get("CRAWL_REGISTRY")
    return registry_location(value) if value else _home(env) / "sources.yaml"


def _imports(env: Mapping[str, str]) -> Path:
    value = env.get("CRAWL_IMPORT_ROOT")
    return Path(value).resolve() if value else _home(env) / "imports"


def _retention(env: Mapping[str, str]) -> Path:
    value = env.get("CRAWL_RETENTION")
    registry = _registry(env)
    return Path(value) if value else (registry.parent if isinstance(registry, Path) else _home(env)) / "retention.yaml"


def _enrichment(env: Mapping[str, str]) -> Path:
    value = env.get("CRAWL_ENRICHMENT")
    return Path(value).resolve() if value else _home(env) / "enrichment.yaml"


def _elasticsearch(env: Mapping[str, str]) -> ElasticsearchSettings:
    return ElasticsearchSettings(
        url=env.get("CRAWL_ES_URL", ""),
        api_key=env.get("CRAWL_ES_API_KEY", ""),
        username=env.get("CRAWL_ES_USERNAME", ""),
        password=env.get("CRAWL_ES_PASSWORD", ""),
        ca_certs=env.get("CRAWL_ES_CA_CERTS", ""),
        verify_certs=env.get("CRAWL_ES_VERIFY_CERTS", "true").lower() not in ("0", "false", "no"),
    )


@dataclass(frozen=True)
class SchedulerSettings:
    """Knobs of a platform's scheduler (see docs/OPERATIONS.md for how they were chosen)."""

    window: int = 2500  # sources examined per tick (round-robin over the registry)
    max_runs_in_flight: int = 4  # runs this scheduler keeps queued or running at once
    max_batch: int = 200  # sources per batch run at most
    min_batch: int = 10  # fewer sources than this share one run (a run costs ~5 s of overhead)
    backoff_base_seconds: float = 60.0  # after the 1st failure; doubles per further failure
    backoff_cap_seconds: float = 6 * 3600.0
    probe_budget: int = 500  # export-file stat() calls per tick
    single_share: float = 0.5  # at most this share of free run slots goes to failing sources


def _scheduler(env: Mapping[str, str]) -> SchedulerSettings:
    """The scheduler's knobs with the ``CRAWL_SCHEDULER_*`` overrides."""
    d = SchedulerSettings()
    return SchedulerSettings(
        window=int(_number(env, "CRAWL_SCHEDULER_WINDOW", d.window)),
        max_runs_in_flight=int(_number(env, "CRAWL_SCHEDULER_MAX_RUNS", d.max_runs_in_flight)),
        max_batch=int(_number(env, "CRAWL_SCHEDULER_MAX_BATCH", d.max_batch)),
        min_batch=int(_number(env, "CRAWL_SCHEDULER_MIN_BATCH", d.min_batch)),
        backoff_base_seconds=_number(env, "CRAWL_SCHEDULER_BACKOFF_SECONDS", d.backoff_base_seconds),
        backoff_cap_seconds=_number(env, "CRAWL_SCHEDULER_BACKOFF_CAP_SECONDS", d.backoff_cap_seconds),
        probe_budget=int(_number(env, "CRAWL_SCHEDULER_PROBE_BUDGET", d.probe_budget)),
    )


@dataclass(frozen=True)
class Settings:
    """Everything the package takes from the environment, read at once (``from_env``)."""

    dagster_home: Path
    lake_root: str  # CRAWL_LAKE: a folder or any fsspec URL
    registry_path: Path | str  # CRAWL_REGISTRY: a file, s3://bucket/key or postgres[:name]
    import_root: Path  # CRAWL_IMPORT_ROOT: export files, one folder per tenant below it
    retention_path: Path  # CRAWL_RETENTION, else retention.yaml next to the registry
    enrichment_path: Path  # CRAWL_ENRICHMENT, else $DAGSTER_HOME/enrichment.yaml
    scheduler: SchedulerSettings  # CRAWL_SCHEDULER_* (docs/OPERATIONS.md)
    elasticsearch: ElasticsearchSettings = field(default_factory=ElasticsearchSettings)
    scheduler_interval_seconds: int = 30  # CRAWL_SCHEDULER_INTERVAL_SECONDS
    registry_sensor_interval_seconds: int = 30  # CRAWL_REGISTRY_SENSOR_INTERVAL_SECONDS
    scheduler_runs_per_credential: int | None = None  # CRAWL_SCHEDULER_RUNS_PER_CREDENTIAL (unset: each platform's own)
    api_rate_per_minute: int = 600  # CRAWL_API_RATE: requests per key and minute
    api_es_timeout_seconds: float = 30.0  # CRAWL_API_ES_TIMEOUT
    api_release_max_records: int = 100_000  # CRAWL_API_RELEASE_MAX_RECORDS: most records of a release built by the API
    index_prefix: str = "crawl"  # CRAWL_INDEX_PREFIX, validated at start; index names read it through index_prefix()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Settings":
        """The settings of ``environ`` (default: this process's environment); a bad number raises naming it."""
        env = os.environ if environ is None else environ
        return cls(
            dagster_home=_home(env),
            lake_root=_lake(env),
            registry_path=_registry(env),
            import_root=_imports(env),
            retention_path=_retention(env),
            enrichment_path=_enrichment(env),
            elasticsearch=_elasticsearch(env),
            scheduler=_scheduler(env),
            scheduler_interval_seconds=max(1, int(_number(env, "CRAWL_SCHEDULER_INTERVAL_SECONDS", 30))),
            registry_sensor_interval_seconds=max(1, int(_number(env, "CRAWL_REGISTRY_SENSOR_INTERVAL_SECONDS", 30))),
            scheduler_runs_per_credential=(int(_number(env, "CRAWL_SCHEDULER_RUNS_PER_CREDENTIAL", 0))
                                           if env.get("CRAWL_SCHEDULER_RUNS_PER_CREDENTIAL") else None),
            api_rate_per_minute=int(_number(env, "CRAWL_API_RATE", 600)),
            api_es_timeout_seconds=_number(env, "CRAWL_API_ES_TIMEOUT", 30.0),
            api_release_max_records=max(1, int(_number(env, "CRAWL_API_RELEASE_MAX_RECORDS", 100_000))),
            index_prefix=_index_prefix(env),
        )


def export(**values: str) -> None:
    """Set variables for what reads the environment itself: Dagster and the processes started from this one."""
    os.environ.update(values)


def export_default(**values: str) -> None:
    """``export`` for the variables still unset (an operator's own choice wins)."""
    os.environ.update({name: value for name, value in values.items() if name not in os.environ})


def dagster_home() -> Path:
    """The Dagster instance folder (``DAGSTER_HOME``), or ``./.crawl_home`` when unset."""
    return _home(os.environ)


def lake_root() -> str:
    """``CRAWL_LAKE`` (a folder or any fsspec URL), else ``$DAGSTER_HOME/lake``."""
    return _lake(os.environ)


def registry_path() -> Path | str:
    """``CRAWL_REGISTRY`` (a file, ``s3://bucket/key`` or ``postgres[:name]``), else ``$DAGSTER_HOME/sources.yaml``."""
    return _registry(os.environ)


def import_root() -> Path:
    """Where export files must be, one folder per tenant: ``CRAWL_IMPORT_ROOT``, else ``$DAGSTER_HOME/imports``."""
    return _imports(os.environ)


def elasticsearch() -> ElasticsearchSettings:
    """The cluster settings from the environment, read when called."""
    return _elasticsearch(os.environ)


def retention_path() -> Path:
    """The retention policy file: ``CRAWL_RETENTION``, else ``retention.yaml`` next to the registry."""
    return _retention(os.environ)


def enrichment_path() -> Path:
    """The enrichment file: ``CRAWL_ENRICHMENT``, else ``$DAGSTER_HOME/enrichment.yaml``."""
    return _enrichment(os.environ)


def max_line_bytes() -> int:
    """The longest export-file line read (longer: quarantined): ``CRAWL_MAX_LINE_BYTES`` (>= 1 KiB), else 8 MiB."""
    return max(1024, int(_number(os.environ, "CRAWL_MAX_LINE_BYTES", 8 << 20)))


def models_root() -> Path:
    """Where the classifier's models must be: ``CRAWL_MODELS``, else ``$DAGSTER_HOME/models``."""
    value = os.environ.get("CRAWL_MODELS")
    return Path(value).expanduser() if value else _home(os.environ) / "models"


def erasure_key_file() -> Path:
    """The erasure log key file (not in the lake): ``CRAWL_ERASURE_KEY_FILE``, else ``$DAGSTER_HOME/erasure.key``."""
    value = os.environ.get("CRAWL_ERASURE_KEY_FILE")
    return Path(value).expanduser() if value else _home(os.environ) / "erasure.key"


def release_root() -> Path:
    """Where releases are written, one folder per tenant: ``CRAWL_RELEASE_ROOT``, else ``$DAGSTER_HOME/releases``."""
    value = os.environ.get("CRAWL_RELEASE_ROOT")
    return Path(value).resolve() if value else _home(os.environ) / "releases"


def release_key_file() -> Path | None:
    """The key of a release's pseudonymized author ids: the file ``CRAWL_RELEASE_KEY_FILE`` (None when unset)."""
    value = os.environ.get("CRAWL_RELEASE_KEY_FILE")
    return Path(value).expanduser() if value else None


INDEX_PREFIX_VARIABLE = "CRAWL_INDEX_PREFIX"
DEFAULT_INDEX_PREFIX = "crawl"
# A lowercase word: never a pattern (no *, ?, comma), never one prefix's names inside another's (names are
# ``{prefix}-...`` and a prefix holds no '-'), always a valid start of an index name (no '_', '-', '+').
_INDEX_PREFIX = re.compile(r"[a-z][a-z0-9]{0,19}")


@lru_cache(maxsize=16)
def check_index_prefix(value: str) -> str:
    """``value`` if it is a valid index prefix, else a ValueError naming the variable."""
    if not _INDEX_PREFIX.fullmatch(value):
        raise ValueError(f"environment variable {INDEX_PREFIX_VARIABLE}: expected a lowercase letter then up to 19 "
                         f"lowercase letters or digits (no '-', '_', '*', ','), got {value!r}")
    return value


def _index_prefix(env: Mapping[str, str]) -> str:
    value = env.get(INDEX_PREFIX_VARIABLE)  # set but empty is refused: a blank value must not mean the default's indices
    return DEFAULT_INDEX_PREFIX if value is None else check_index_prefix(value)


def index_prefix() -> str:
    """``CRAWL_INDEX_PREFIX`` (default ``crawl``): the first word of every index, alias and template name."""
    return _index_prefix(os.environ)


def erasure_key_secret() -> str:
    """``CRAWL_ERASURE_KEY``: the erasure log's key itself, shared as a secret ("" when unset: the key file)."""
    return os.environ.get("CRAWL_ERASURE_KEY", "")


def api_cursor_secret() -> str:
    """``CRAWL_API_CURSOR_SECRET``: what seals the API's cursors across machines ("" when unset: a local file)."""
    return os.environ.get("CRAWL_API_CURSOR_SECRET", "")


@dataclass(frozen=True)
class LocalNodeSettings:
    """What the local Elasticsearch node (``crawl-assets es local``, the tests' node) reads: server version,
    distribution cache, Maven repository, Java homes to try and the system's JVM folder after them, the user a
    root process runs it as, keep its files."""

    version: str
    cache: str
    maven_repository: str
    java_homes: tuple[str, ...]
    jvm_dir: str
    run_as: str
    keep_workdir: bool
    path: str


def local_node() -> LocalNodeSettings:
    env = os.environ
    return LocalNodeSettings(
        version=env.get("CRAWL_TEST_ES_VERSION", "8.19.21"),
        cache=env.get("CRAWL_TEST_ES_CACHE", ""),
        maven_repository=env.get("CRAWL_TEST_M2_REPO", ""),
        java_homes=tuple(env[v] for v in ("ES_JAVA_HOME", "JAVA_HOME") if env.get(v)),
        # Where Debian/Ubuntu (and Temurin's packages) put JDKs: searched when those are missing or too old.
        jvm_dir=env.get("CRAWL_TEST_JVM_DIR") or "/usr/lib/jvm",
        run_as=env.get("CRAWL_TEST_ES_USER", ""),
        keep_workdir=env.get("CRAWL_TEST_ES_KEEP") == "1",
        path=env.get("PATH", "/usr/bin:/bin"),
    )


# The Dagster instance's database: Postgres when DAGSTER_PG_URL (a SQLAlchemy URL) or DAGSTER_PG_HOST (+ _PORT,
# _USER, _PASSWORD, _DB) is set, else SQLite under $DAGSTER_HOME/storage (docs/OPERATIONS.md)
_PG_VARS = ("DAGSTER_PG_URL", "DAGSTER_PG_HOST")
PG_SCHEME = "postgresql+psycopg2"  # the installed driver; SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3


def postgres_configured() -> bool:
    return any(os.environ.get(v) for v in _PG_VARS)


def postgres_config() -> dict[str, Any]:
    """dagster-postgres config from the environment."""
    if os.environ.get("DAGSTER_PG_URL"):
        return {"postgres_url": os.environ["DAGSTER_PG_URL"]}
    env = os.environ
    return {"postgres_db": {"hostname": env["DAGSTER_PG_HOST"], "port": int(env.get("DAGSTER_PG_PORT", "5432")),
                            "username": env.get("DAGSTER_PG_USER", "postgres"),
                            "password": env.get("DAGSTER_PG_PASSWORD", ""),
                            "db_name": env.get("DAGSTER_PG_DB", "postgres"), "scheme": PG_SCHEME}}


def sqlite_dir() -> Path:
    """Where the SQLite instance keeps its database files."""
    return Path(os.environ.get("DAGSTER_HOME") or os.path.abspath(DEFAULT_HOME)) / "storage"


def use_dagster_home(home: Path | None = None) -> Path:
    """Make ``home`` (default: the configured one) the instance Dagster opens here and in the processes started."""
    home = (home or dagster_home()).resolve()
    export(DAGSTER_HOME=str(home))
    return home


def add_python_warning_filter(entry: str) -> None:
    """Add one ``PYTHONWARNINGS`` entry for the processes this one starts, after the user's own."""
    held = [e for e in os.environ.get("PYTHONWARNINGS", "").split(",") if e]
    if entry not in held:
        export(PYTHONWARNINGS=",".join([*held, entry]))


def environment() -> Mapping[str, str]:
    """The process environment, for variables whose names are data: the per-tenant secrets
    ``CRAWL_<PLATFORM>_<SECRET>[__TENANT[__NAME]]`` (inside Dagster they stay ``EnvVar`` references)."""
    return os.environ


# resource field <- variable (type): Telegram tunables an operator may set without writing run config
_TELEGRAM_TUNABLES = {
    "request_interval_seconds": ("CRAWL_TELEGRAM_REQUEST_INTERVAL", float),
    "flood_sleep_threshold_seconds": ("CRAWL_TELEGRAM_FLOOD_SLEEP_MAX", int),
    "max_pages_per_run": ("CRAWL_TELEGRAM_MAX_PAGES", int),
    "max_messages_per_run": ("CRAWL_TELEGRAM_MAX_MESSAGES", int),
    "flood_backoff": ("CRAWL_TELEGRAM_FLOOD_BACKOFF", float),
    "pace_max_interval_seconds": ("CRAWL_TELEGRAM_PACE_MAX_INTERVAL", float),
    "pace_recovery_half_life_seconds": ("CRAWL_TELEGRAM_PACE_HALF_LIFE", float),
    "account_requests_per_hour": ("CRAWL_TELEGRAM_REQUESTS_PER_HOUR", int),
    "web_base_url": ("CRAWL_TELEGRAM_WEB_BASE_URL", str),  # another host for t.me/s pages (a mirror, the stand-in)
    "web_request_interval_seconds": ("CRAWL_TELEGRAM_WEB_INTERVAL", float),
}


def _tunables(env: Mapping[str, str], table: Mapping[str, tuple[str, type]]) -> dict[str, Any]:
    """The fields of ``table`` (field <- variable, type) whose variable is set; a bad number names its variable."""
    return {name: (env[var] if kind is str else kind(_number(env, var, 0.0)))
            for name, (var, kind) in table.items() if env.get(var)}


def telegram_tunables(environ: Mapping[str, str] | None = None) -> dict[str, float]:
    """The ``TelegramResource`` fields set in the environment (unset ones keep the resource's defaults)."""
    return _tunables(environment() if environ is None else environ, _TELEGRAM_TUNABLES)


# resource field <- variable after the platform's ``CRAWL_<PLATFORM>_`` prefix (type): what an operator of a
# pulled source may set without writing run config (docs/sources/*.md)
_SOURCE_TUNABLES = {
    "base_url": ("BASE_URL", str),  # another API host: a proxy, a regional host, the stand-in in tests
    "token_uri": ("TOKEN_URI", str),  # another OAuth token endpoint than the key's own
}


def source_tunables(prefix: str, fields: tuple[str, ...], environ: Mapping[str, str] | None = None
                    ) -> dict[str, Any]:
    """The ``fields`` of a source resource (among ``base_url``, ``token_uri``) set in the environment as
    ``<prefix>_<VARIABLE>`` (``CRAWL_X_BASE_URL``); unset ones keep the resource's defaults."""
    unknown = set(fields) - set(_SOURCE_TUNABLES)
    if unknown:
        raise ValueError(f"no environment variable for source resource field(s) {sorted(unknown)}")
    table = {name: (f"{prefix}_{_SOURCE_TUNABLES[name][0]}", _SOURCE_TUNABLES[name][1]) for name in fields}
    return _tunables(environment() if environ is None else environ, table)
