"""Where the registry's bytes live, each version named, and writes that refuse to overwrite a version their
writer never read.

Three stores, chosen by ``CRAWL_REGISTRY`` (``settings.registry_location``):

- a local file (the default, ``$DAGSTER_HOME/sources.yaml``): its version is the SHA-256 of its bytes; a write
  takes the ``flock`` beside it, checks the version and replaces the file atomically (temp file + rename);
- ``s3://bucket/key`` (any S3-compatible store; the standard ``AWS_*`` variables find it): the object's ETag;
  a write is a conditional ``PutObject`` (``If-Match``, or ``If-None-Match: *`` for the first), a read of a
  known version a conditional ``GetObject`` (``If-None-Match``: 304 when unchanged, no body sent);
- ``postgres`` or ``postgres:<name>``: a row of ``crawl_registry`` in the instance's database
  (``DAGSTER_PG_URL``/``DAGSTER_PG_HOST``) with a version number; a write is
  ``UPDATE ... WHERE version = <read>`` (or an insert that must not find a row).

A write whose version is not the current one raises :class:`RegistryConflict`: two editors (a person's
``sources pause`` and a run's automatic pause, on two machines) never silently overwrite each other; the
loser re-reads and applies its change again (``store.update_registry``). Reads are bounded like the file's.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from crawl_assets import settings
from crawl_assets.instance import db as instance_db
from crawl_assets.locks.shared import exclusive
from crawl_assets.registry.validate import RegistryFileError, check_size, read_bounded

TABLE = "crawl_registry"
_PG_NAME = re.compile(r"postgres(?::([a-z0-9][a-z0-9_-]{0,62}))?")
_S3 = re.compile(r"s3://([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])/([^\x00]{1,1024})")


class RegistryConflict(RuntimeError):
    """The registry changed since it was read: the write was refused, nothing was overwritten."""


@dataclass(frozen=True)
class Snapshot:
    """The registry's bytes (None: it does not exist yet) and the version they are."""

    data: bytes | None
    version: str  # "" when it does not exist


class RegistryStorage(Protocol):
    location: str

    def read(self) -> Snapshot: ...

    def read_if_changed(self, version: str) -> Snapshot | None:
        """The current snapshot, or None when it is still ``version`` (nothing transferred)."""

    def write(self, data: bytes, expected: str) -> str:
        """Store ``data`` if the current version is ``expected`` ("" = must not exist); the new version."""


_remote: dict[tuple[int, str], RegistryStorage] = {}  # one per process (a forked child makes its own client)


def storage_of(location: str | os.PathLike[str]) -> RegistryStorage:
    """The store of a registry location (``settings.registry_location``'s result, or a path)."""
    text = str(location)
    if (text == "postgres" or text.startswith("postgres:")) and not _PG_NAME.fullmatch(text):
        raise RegistryFileError(f"{text}: a registry in Postgres is named postgres or postgres:<name> "
                                "(lower-case letters, digits, '-' and '_', at most 63)")
    if "://" in text and not text.startswith("s3://"):
        raise RegistryFileError(f"{text}: a registry lives in a local file, s3://bucket/key or postgres[:name]")
    if settings.is_remote(text):
        slot = (os.getpid(), text)
        store = _remote.get(slot)
        if store is None:
            store = _remote[slot] = PostgresRegistry(text) if _PG_NAME.fullmatch(text) else S3Registry(text)
        return store
    return FileRegistry(Path(text))


def _bounded(location: str, data: bytes) -> bytes:
    return check_size(location, data)


# -- a local file ------------------------------------------------------------------------------------------
class FileRegistry:
    def __init__(self, path: Path):
        self.path = path
        self.location = str(path)

    def read(self) -> Snapshot:
        try:
            with self.path.open("rb") as fh:
                data = read_bounded(fh)
        except FileNotFoundError:
            return Snapshot(None, "")
        except OSError as exc:
            raise RegistryFileError(f"{self.path}: cannot read: {exc}") from exc
        return Snapshot(_bounded(self.location, data), hashlib.sha256(data).hexdigest())

    def read_if_changed(self, version: str) -> Snapshot | None:
        snap = self.read()
        return None if snap.version == version else snap

    def write(self, data: bytes, expected: str) -> str:
        with exclusive(self.path.with_name(f".{self.path.name}.lock")):
            current = self.read().version
            if current != expected:
                raise RegistryConflict(f"{self.path} changed since it was read; read it again and redo the change")
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.stem}.", suffix=".yaml", dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        return hashlib.sha256(data).hexdigest()


# -- an S3 object --------------------------------------------------------------------------------------------
class S3Registry:
    def __init__(self, url: str):
        match = _S3.fullmatch(url)
        if match is None:
            raise RegistryFileError(f"{url}: expected s3://bucket/key")
        self.location, self.bucket, self.key = url, match.group(1), match.group(2)
        self._client: Any = None

    def client(self) -> Any:
        if self._client is None:  # botocore comes with s3fs (the lake's S3 extra); AWS_ENDPOINT_URL etc. apply
            import botocore.session

            self._client = botocore.session.get_session().create_client("s3")
        return self._client

    def _get(self, **conditions: str) -> Snapshot | None:
        from botocore.exceptions import ClientError

        try:
            answer = self.client().get_object(Bucket=self.bucket, Key=self.key, **conditions)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code == "304":
                return None
            if code in ("NoSuchKey", "404"):
                return Snapshot(None, "")
            raise RegistryFileError(f"{self.location}: cannot read: {code or exc}") from exc
        with answer["Body"] as body:
            data = read_bounded(body)
        return Snapshot(_bounded(self.location, data), answer["ETag"])

    def read(self) -> Snapshot:
        snap = self._get()
        assert snap is not None
        return snap

    def read_if_changed(self, version: str) -> Snapshot | None:
        return self._get(IfNoneMatch=version) if version else self.read()

    def write(self, data: bytes, expected: str) -> str:
        from botocore.exceptions import ClientError

        condition = {"IfMatch": expected} if expected else {"IfNoneMatch": "*"}
        try:
            answer = self.client().put_object(Bucket=self.bucket, Key=self.key, Body=data,
                                              ContentType="application/yaml", **condition)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code in ("PreconditionFailed", "ConditionalRequestConflict", "NoSuchKey") or status in (409, 412):
                raise RegistryConflict(f"{self.location} changed since it was read; read it again and redo the "
                                       "change") from exc
            raise RegistryFileError(f"{self.location}: cannot write: {code or exc}") from exc
        return answer["ETag"]


# -- a row in the instance's Postgres database ---------------------------------------------------------------
class PostgresRegistry:
    def __init__(self, location: str):
        match = _PG_NAME.fullmatch(location)
        assert match is not None
        self.location, self.name = location, match.group(1) or "sources"
        if not settings.postgres_configured():
            raise RegistryFileError(f"{location}: the registry in Postgres needs the instance on Postgres "
                                    "(DAGSTER_PG_URL or DAGSTER_PG_HOST)")

    def _query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        import psycopg2

        for attempt in (1, 2):
            conn = _connection()
            try:
                with conn.cursor() as cur:
                    cur.execute(sql, params)
                    return cur.fetchall() if cur.description else []
            except (psycopg2.OperationalError, psycopg2.InterfaceError) as exc:
                _drop_connection(conn)
                if attempt == 2:
                    raise RegistryFileError(f"{self.location}: the database is unreachable: {exc}") from exc
        raise AssertionError("unreachable")

    def read(self) -> Snapshot:
        rows = self._query(f"SELECT version, body FROM {TABLE} WHERE name = %s", (self.name,))
        if not rows:
            return Snapshot(None, "")
        return Snapshot(_bounded(self.location, bytes(rows[0][1])), str(rows[0][0]))

    def read_if_changed(self, version: str) -> Snapshot | None:
        if not version:
            return self.read()
        rows = self._query(f"SELECT version, body FROM {TABLE} WHERE name = %s AND version <> %s",
                           (self.name, int(version)))
        if rows:
            return Snapshot(_bounded(self.location, bytes(rows[0][1])), str(rows[0][0]))
        return None if self._query(f"SELECT 1 FROM {TABLE} WHERE name = %s", (self.name,)) else Snapshot(None, "")

    def write(self, data: bytes, expected: str) -> str:
        if expected:
            rows = self._query(f"UPDATE {TABLE} SET body = %s, version = version + 1, updated_at = now() "
                               "WHERE name = %s AND version = %s RETURNING version", (data, self.name, int(expected)))
        else:
            rows = self._query(f"INSERT INTO {TABLE} (name, version, body) VALUES (%s, 1, %s) "
                               "ON CONFLICT (name) DO NOTHING RETURNING version", (self.name, data))
        if not rows:
            raise RegistryConflict(f"{self.location} changed since it was read; read it again and redo the change")
        return str(rows[0][0])


_conn: dict[str, Any] = {}  # (url, pid) -> connection: a forked child opens its own, never uses its parent's
_conn_guard = threading.Lock()


def _connection() -> Any:
    url = instance_db.postgres_url()
    slot = f"{os.getpid()}:{url}"
    with _conn_guard:
        conn = _conn.get(slot)
        if conn is None or conn.closed:
            conn = instance_db.connect(url, "crawl_assets registry")
            instance_db.create_table(conn, TABLE, "name TEXT PRIMARY KEY, version BIGINT NOT NULL, body BYTEA NOT NULL, "
                                     "updated_at TIMESTAMPTZ NOT NULL DEFAULT now()")
            _conn[slot] = conn
        return conn


def _drop_connection(conn: Any) -> None:
    with _conn_guard:
        for slot, held in list(_conn.items()):
            if held is conn:
                del _conn[slot]
    try:
        conn.close()
    except Exception:  # noqa: BLE001 - it is being dropped because it broke
        pass
