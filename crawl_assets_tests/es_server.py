"""A protocol-level Elasticsearch 9 stand-in for tests and benches: real HTTP on 127.0.0.1, real bodies.

It speaks the REST endpoints crawl_assets uses (root info, index templates, index create/delete/exists,
aliases, ``_bulk``, ``_count``, ``_search``, ``_refresh``, ``_doc``, ``_cat/indices``, cluster health) with
the bodies and headers a 9.x node sends (``X-Elastic-Product``, compatible-with media types), keeps documents
with versions (internal, ``external`` and ``external_gte`` semantics, 409 ``version_conflict_engine_exception``
items), applies index templates (mappings, aliases) on auto-create, and checks documents against the mapped
types of date/numeric/boolean/object fields like a real node (``document_parsing_exception``).

Faults are injected through ``server.faults``: whole-request errors (e.g. N x 429), per-item 429
``es_rejected_execution_exception``, per-item ``mapper_parsing_exception``, slow responses and dropped
connections (optionally after the request was applied, like a response lost on the wire).

Use as a context manager (``with ESTestServer() as es: es.url``), or run it in its own process with
``python -m crawl_assets_tests.es_server`` (prints the URL, serves until killed) so a bench measures the
client and not this server.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fnmatch
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import orjson

VERSION = "9.1.0"
_COMPAT = re.compile(r"compatible-with=(\d+)")
_INVALID_INDEX_CHARS = set('\\/*?"<>| ,#:')


class EsError(Exception):
    """An error answered as a real ES error body."""

    def __init__(self, status: int, type_: str, reason: str, **extra: Any) -> None:
        super().__init__(reason)
        self.status, self.type, self.reason, self.extra = status, type_, reason, extra

    def body(self) -> dict[str, Any]:
        cause = {"type": self.type, "reason": self.reason, **self.extra}
        return {"error": {"root_cause": [cause], **cause}, "status": self.status}


def _not_found(name: str) -> EsError:
    return EsError(404, "index_not_found_exception", f"no such index [{name}]",
                   **{"resource.type": "index_or_alias", "resource.id": name, "index_uuid": "_na_", "index": name})


_REQUEST_ERRORS = {
    429: ("es_rejected_execution_exception",
          "rejected execution of coordinating operation [coordinating_and_primary_bytes=0, replica_bytes=0, "
          "all_bytes=0, coordinating_operation_bytes=1024, max_coordinating_and_primary_bytes=0]"),
    500: ("internal_server_error", "injected internal error"),
    502: ("bad_gateway", "injected bad gateway"),
    503: ("cluster_block_exception", "blocked by: [SERVICE_UNAVAILABLE/2/no master];"),
    504: ("timeout_exception", "injected gateway timeout"),
}


@dataclass
class Faults:
    """Thread-safe fault plan; each method arms faults for the next matching requests or items."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    request_errors: list[tuple[str, int]] = field(default_factory=list)
    drops: list[tuple[str, bool]] = field(default_factory=list)
    delay_s: float = 0.0
    delay_left: int | None = None
    delay_path: str = "_bulk"
    item_rejections: dict[str, int] = field(default_factory=dict)
    mapping_errors: set[str] = field(default_factory=set)

    def fail_requests(self, n: int, status: int = 429, path: str = "_bulk") -> None:
        """The next ``n`` requests whose path contains ``path`` get ``status`` with an ES error body."""
        with self.lock:
            self.request_errors.extend([(path, status)] * n)

    def drop_connections(self, n: int, *, after_apply: bool = False, path: str = "_bulk") -> None:
        """The next ``n`` matching requests get their connection closed without a response;
        with ``after_apply`` the request is applied first (a response lost on the wire)."""
        with self.lock:
            self.drops.extend([(path, after_apply)] * n)

    def slow(self, seconds: float, n: int | None = None, path: str = "_bulk") -> None:
        """Delay matching responses by ``seconds`` (for the next ``n`` requests, or until cleared)."""
        with self.lock:
            self.delay_s, self.delay_left, self.delay_path = seconds, n, path

    def reject_items(self, ids: Iterable[str], times: int = 1) -> None:
        """Bulk items with these ``_id``s get a per-item 429 the next ``times`` times they are sent."""
        with self.lock:
            for i in ids:
                self.item_rejections[str(i)] = times

    def fail_mapping(self, ids: Iterable[str]) -> None:
        """Bulk items with these ``_id``s always fail with a per-item 400 ``mapper_parsing_exception``."""
        with self.lock:
            self.mapping_errors.update(str(i) for i in ids)

    def clear(self) -> None:
        with self.lock:
            self.request_errors.clear()
            self.drops.clear()
            self.delay_s, self.delay_left = 0.0, None
            self.item_rejections.clear()
            self.mapping_errors.clear()

    def _take(self, items: list[tuple[str, Any]], path: str) -> Any:
        for i, (p, value) in enumerate(items):
            if p in path:
                del items[i]
                return value
        return None

    def take_request_error(self, path: str) -> int | None:
        with self.lock:
            return self._take(self.request_errors, path)

    def take_drop(self, path: str) -> bool | None:
        with self.lock:
            return self._take(self.drops, path)

    def take_delay(self, path: str) -> float:
        with self.lock:
            if not self.delay_s or self.delay_path not in path or self.delay_left == 0:
                return 0.0
            if self.delay_left is not None:
                self.delay_left -= 1
            return self.delay_s

    def item_fault(self, doc_id: str) -> str | None:
        """'reject', 'mapping' or None for one bulk item (called under the state lock)."""
        if not self.item_rejections and not self.mapping_errors:
            return None
        with self.lock:
            if doc_id in self.mapping_errors:
                return "mapping"
            left = self.item_rejections.get(doc_id)
            if left:
                self.item_rejections[doc_id] = left - 1
                return "reject"
        return None


@dataclass
class Index:
    name: str
    uuid: str
    settings: dict[str, Any]
    mappings: dict[str, Any]
    aliases: dict[str, dict[str, Any]]
    created: float = field(default_factory=time.time)
    # _id -> [version, seq_no, source (dict, or raw JSON bytes parsed on first read), source size in bytes]
    docs: dict[str, list[Any]] = field(default_factory=dict)
    seq_no: int = -1
    _checker: dict[str, Any] | None = None

    @property
    def checker(self) -> dict[str, Any]:
        if self._checker is None:
            self._checker = _compile(self.mappings.get("properties", {}))
        return self._checker


def source_of(entry: list[Any]) -> dict[str, Any]:
    """The stored ``_source`` of a document entry (parsed lazily when stored as bytes)."""
    src = entry[2]
    if isinstance(src, bytes):
        src = entry[2] = orjson.loads(src)
    return src


def _parse_date(value: Any) -> datetime | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value / 1000, tz=timezone.utc)
    if not isinstance(value, str) or not value:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        if value.isdigit():
            return datetime.fromtimestamp(int(value) / 1000, tz=timezone.utc)
        return None
    return dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt


def _is_number(value: Any, integral: bool) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return True
    return False


_NUMERIC = frozenset({"long", "integer", "short", "byte", "unsigned_long", "double", "float", "half_float",
                      "scaled_float"})


def _compile(props: dict[str, Any]) -> dict[str, Any]:
    """Mapping properties -> {field: (type, compiled sub-properties)} for the document checks."""
    out: dict[str, Any] = {}
    for key, mapping in props.items():
        kind = mapping.get("type", "object")
        if kind in ("object", "nested") and mapping.get("enabled") is False:
            kind = "flattened"
        out[key] = (kind, _compile(mapping.get("properties", {})) if kind in ("object", "nested") else None)
    return out


def _check_fields(compiled: dict[str, Any], doc: dict[str, Any], prefix: str) -> str | None:
    """Like a node's document parser for mapped leaf types: the first error message, else None."""
    for key, value in doc.items():
        spec = compiled.get(key)
        if spec is None or value is None:
            continue
        kind, sub = spec
        if kind == "flattened":
            continue
        for item in value if type(value) is list else (value,):
            if item is None:
                continue
            if sub is not None:
                if type(item) is not dict:
                    return (f"object mapping for [{prefix}{key}] tried to parse field [{key}] as object, "
                            f"but found a concrete value")
                error = _check_fields(sub, item, prefix + key + ".")
                if error:
                    return error
                continue
            if type(item) is dict or type(item) is list:
                ok = False
            elif kind == "date":
                ok = _parse_date(item) is not None
            elif kind in _NUMERIC:
                ok = _is_number(item, True)
            elif kind == "boolean":
                ok = item is True or item is False or item in ("true", "false", "")
            else:
                continue
            if not ok:
                preview = orjson.dumps(item).decode()[:40].strip('"')
                return (f"failed to parse field [{prefix}{key}] of type [{kind}] in document. "
                        f"Preview of field's value: '{preview}'")
    return None


def _values(source: dict[str, Any], path: str) -> list[Any]:
    """Leaf values at a dotted path, through arrays of objects."""
    current: list[Any] = [source]
    for part in path.split("."):
        nxt: list[Any] = []
        for node in current:
            if isinstance(node, list):
                node_items = node
            else:
                node_items = [node]
            for n in node_items:
                if isinstance(n, dict) and part in n:
                    v = n[part]
                    nxt.extend(v if isinstance(v, list) else [v])
        current = nxt
        if not current:
            break
    return [v for v in current if v is not None]


_SUBFIELDS = ("keyword", "raw", "std", "en")


def _field_values(source: dict[str, Any], path: str, doc_id: str, index: str) -> list[Any]:
    if path == "_id":
        return [doc_id]
    if path == "_index":
        return [index]
    values = _values(source, path)
    if not values and "." in path and path.rsplit(".", 1)[1] in _SUBFIELDS:
        values = _values(source, path.rsplit(".", 1)[0])
    return values


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return str(a).lower() == str(b).lower()
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return str(a) == str(b)


def _compare_key(value: Any) -> Any:
    if isinstance(value, str):
        dt = _parse_date(value) if len(value) >= 8 and value[4:5] == "-" else None
        if dt is not None:
            return dt.timestamp()
    if isinstance(value, bool):
        return int(value)
    return value


def _in_range(value: Any, spec: dict[str, Any]) -> bool:
    v = _compare_key(value)
    try:
        for op, bound in spec.items():
            if op in ("format", "time_zone", "boost", "relation"):
                continue
            b = _compare_key(bound)
            if isinstance(v, str) != isinstance(b, str):
                v, b = str(v), str(b)
            if op == "gte" and not v >= b or op == "gt" and not v > b:
                return False
            if op == "lte" and not v <= b or op == "lt" and not v < b:
                return False
    except TypeError:
        return False
    return True


_TOKEN = re.compile(r"\w+", re.UNICODE)


def matches(query: dict[str, Any] | None, source: dict[str, Any], doc_id: str, index: str) -> bool:
    """Evaluate the query DSL subset tests use: match_all, term(s), ids, range, exists, match, bool."""
    if not query:
        return True
    (kind, spec), = query.items()
    if kind == "match_all":
        return True
    if kind == "match_none":
        return False
    if kind == "bool":
        def clauses(name: str) -> list[dict[str, Any]]:
            c = spec.get(name, [])
            return c if isinstance(c, list) else [c]
        for q in clauses("must") + clauses("filter"):
            if not matches(q, source, doc_id, index):
                return False
        if any(matches(q, source, doc_id, index) for q in clauses("must_not")):
            return False
        should = clauses("should")
        needed = spec.get("minimum_should_match", 0 if clauses("must") or clauses("filter") else 1)
        return not should or sum(matches(q, source, doc_id, index) for q in should) >= int(needed)
    if kind == "ids":
        return doc_id in spec.get("values", [])
    (fld, arg), = ((k, v) for k, v in spec.items() if k != "boost")
    values = _field_values(source, fld, doc_id, index)
    if kind == "term":
        target = arg["value"] if isinstance(arg, dict) else arg
        return any(_same(v, target) for v in values)
    if kind == "terms":
        return any(_same(v, t) for v in values for t in arg)
    if kind == "range":
        return any(_in_range(v, arg) for v in values)
    if kind == "exists":
        return bool(_field_values(source, spec["field"], doc_id, index))
    if kind in ("match", "match_phrase"):
        text = arg["query"] if isinstance(arg, dict) else arg
        wanted = set(_TOKEN.findall(str(text).lower()))
        return any(wanted & set(_TOKEN.findall(str(v).lower())) for v in values)
    raise EsError(400, "parsing_exception", f"unknown query [{kind}]", line=1, col=1)


def _aggregate(aggs: dict[str, Any], hits: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, spec in aggs.items():
        sub = spec.get("aggs") or spec.get("aggregations")
        if "terms" in spec:
            t = spec["terms"]
            counts: Counter[Any] = Counter()
            groups: dict[Any, list[Any]] = {}
            for idx, doc_id, src in hits:
                for v in set(map(lambda x: orjson.dumps(x), _field_values(src, t["field"], doc_id, idx))):
                    key = orjson.loads(v)
                    counts[v] += 1
                    groups.setdefault(v, []).append((idx, doc_id, src))
            ordered = sorted(counts.items(), key=lambda kv: (-kv[1], str(orjson.loads(kv[0]))))
            size = t.get("size", 10)
            buckets = []
            for raw, count in ordered[:size]:
                key = orjson.loads(raw)
                bucket: dict[str, Any] = {"key": int(key) if isinstance(key, bool) else key, "doc_count": count}
                if isinstance(key, bool):
                    bucket["key_as_string"] = str(key).lower()
                if sub:
                    bucket.update(_aggregate(sub, groups[raw]))
                buckets.append(bucket)
            out[name] = {"doc_count_error_upper_bound": 0,
                         "sum_other_doc_count": sum(c for _, c in ordered[size:]), "buckets": buckets}
        elif "date_histogram" in spec:
            d = spec["date_histogram"]
            unit = str(d.get("calendar_interval") or d.get("fixed_interval") or "month")
            by: Counter[datetime] = Counter()
            for idx, doc_id, src in hits:
                for v in _field_values(src, d["field"], doc_id, idx)[:1]:
                    dt = _parse_date(v)
                    if dt is None:
                        continue
                    dt = dt.astimezone(timezone.utc)
                    if unit in ("month", "1M"):
                        key = dt.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
                    elif unit in ("year", "1y"):
                        key = dt.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
                    else:
                        key = dt.replace(hour=0, minute=0, second=0, microsecond=0)
                    by[key] += 1
            out[name] = {"buckets": [
                {"key_as_string": k.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "key": int(k.timestamp() * 1000),
                 "doc_count": c} for k, c in sorted(by.items())]}
        elif "value_count" in spec:
            f = spec["value_count"]["field"]
            out[name] = {"value": sum(len(_field_values(s, f, i, x)) for x, i, s in hits)}
        else:
            raise EsError(400, "parsing_exception", f"unsupported aggregation in [{name}]")
    return out


def filter_path(body: Any, spec: str) -> Any:
    """Apply a ``filter_path`` response filter (dotted patterns with ``*``; arrays are transparent)."""
    patterns = tuple(tuple(p.split(".")) for p in spec.split(",") if p)
    if isinstance(body, dict) and "items" in body and all(p[:2] == ("items", "*") and len(p) > 2 or len(p) == 1
                                                          for p in patterns):
        return _filter_bulk(body, patterns)
    memo: dict[tuple[str, tuple[tuple[str, ...], ...]], tuple[bool, tuple[tuple[str, ...], ...]]] = {}

    def step(key: str, pats: tuple[tuple[str, ...], ...]) -> tuple[bool, tuple[tuple[str, ...], ...]]:
        found = memo.get((key, pats))
        if found is None:
            matching = [p for p in pats if p and fnmatch.fnmatchcase(key, p[0])]
            found = memo[(key, pats)] = (any(len(p) == 1 for p in matching), tuple(p[1:] for p in matching))
        return found

    def walk(node: Any, pats: tuple[tuple[str, ...], ...]) -> Any:
        if isinstance(node, list):
            kept = [walk(x, pats) for x in node]
            return [x for x in kept if x not in (None, {}, [])]
        if not isinstance(node, dict):
            return None
        out = {}
        for key, value in node.items():
            whole, rest = step(key, pats)
            if whole:
                out[key] = value
            elif rest:
                sub = walk(value, rest)
                if sub not in (None, {}, []):
                    out[key] = sub
        return out

    return walk(body, patterns) or {}


def _filter_bulk(body: dict[str, Any], patterns: tuple[tuple[str, ...], ...]) -> dict[str, Any]:
    """``filter_path`` for the bulk response shapes (``errors,items.*.status,...``), fast: one pass per item."""
    top = {p[0] for p in patterns if len(p) == 1}
    flat = [p[2] for p in patterns if len(p) == 3]
    nested: dict[str, list[str]] = {}
    for p in patterns:
        if len(p) == 4:
            nested.setdefault(p[2], []).append(p[3])
    out: dict[str, Any] = {k: v for k, v in body.items() if k in top or k == "items" and "*" in top}
    if "items" in out:
        return out
    items = []
    for item in body["items"]:
        (op, res), = item.items()
        kept = {k: res[k] for k in flat if k in res}
        for k, subs in nested.items():
            value = res.get(k)
            if isinstance(value, dict):
                kept[k] = {s: value[s] for s in subs if s in value}
        items.append({op: kept})
    out["items"] = items
    return out


# filter_path entries under which a successful bulk item is just {status, result}.
_LEAN_FILTERS = frozenset({"errors", "items.*.status", "items.*.result", "items.*.error", "items.*.error.type",
                           "items.*.error.reason"})


_LEAN_CREATED = {"index": {"status": 201, "result": "created"}}
_LEAN_UPDATED = {"index": {"status": 200, "result": "updated"}}


def faults_armed(faults: Faults) -> bool:
    return bool(faults.item_rejections or faults.mapping_errors)


class State:
    """Cluster state: indices, templates, aliases; one lock serializes mutations like a single shard."""

    def __init__(self, faults: Faults) -> None:
        self.lock = threading.RLock()
        self.faults = faults
        self.indices: dict[str, Index] = {}
        self.templates: dict[str, dict[str, Any]] = {}
        self.cluster_uuid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode()[:22]

    # ---- resolution -------------------------------------------------------------------------------
    def aliases(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, idx in self.indices.items():
            for alias in idx.aliases:
                out.setdefault(alias, []).append(name)
        return out

    def resolve(self, expression: str | None, *, ignore_unavailable: bool = False,
                allow_no_indices: bool = True) -> list[str]:
        """Concrete indices of a comma-separated expression of names, aliases and wildcards."""
        if not expression or expression in ("_all", "*"):
            return sorted(self.indices)
        aliases = self.aliases()
        found: list[str] = []
        for part in expression.split(","):
            part = part.strip()
            exclude = part.startswith("-")
            part = part.lstrip("-")
            if "*" in part:
                names = [n for n in self.indices if fnmatch.fnmatchcase(n, part)]
                names += [i for a, idx in aliases.items() if fnmatch.fnmatchcase(a, part) for i in idx]
                if not names and not allow_no_indices:
                    raise _not_found(part)
            elif part in self.indices:
                names = [part]
            elif part in aliases:
                names = aliases[part]
            elif ignore_unavailable:
                names = []
            else:
                raise _not_found(part)
            if exclude:
                found = [n for n in found if n not in names]
            else:
                found.extend(n for n in names if n not in found)
        return sorted(found)

    def template_for(self, name: str) -> dict[str, Any] | None:
        best: tuple[int, dict[str, Any]] | None = None
        for body in self.templates.values():
            if any(fnmatch.fnmatchcase(name, p) for p in body.get("index_patterns", [])):
                prio = int(body.get("priority", 0))
                if best is None or prio > best[0]:
                    best = (prio, body)
        return best[1] if best else None

    def create_index(self, name: str, body: dict[str, Any] | None) -> Index:
        if name in self.indices:
            idx = self.indices[name]
            raise EsError(400, "resource_already_exists_exception", f"index [{name}/{idx.uuid}] already exists",
                          index_uuid=idx.uuid, index=name)
        if (not name or name != name.lower() or name.startswith(("_", "-", "+")) or name in (".", "..")
                or set(name) & _INVALID_INDEX_CHARS):
            raise EsError(400, "invalid_index_name_exception",
                          f"Invalid index name [{name}], must be lowercase and must not contain "
                          f"'\\', '/', '*', '?', '\"', '<', '>', '|', ' ', ',', '#', ':'", index_uuid="_na_", index=name)
        if name in self.aliases():
            raise EsError(400, "invalid_index_name_exception",
                          f"Invalid index name [{name}], already exists as alias", index_uuid="_na_", index=name)
        template = (self.template_for(name) or {}).get("template", {})
        body = body or {}
        settings = {**template.get("settings", {}), **body.get("settings", {})}
        mappings = dict(template.get("mappings", {}))
        if body.get("mappings"):
            mappings = {**mappings, **body["mappings"],
                        "properties": {**mappings.get("properties", {}), **body["mappings"].get("properties", {})}}
        aliases = {**template.get("aliases", {}), **body.get("aliases", {})}
        existing = set(self.indices)
        for alias in aliases:
            if alias in existing:
                raise EsError(400, "invalid_alias_name_exception",
                              f"Invalid alias name [{alias}]: an index or data stream exists with the same name "
                              f"as the alias")
        idx = Index(name, base64.urlsafe_b64encode(uuid.uuid4().bytes).decode()[:22], settings, mappings, aliases)
        self.indices[name] = idx
        return idx

    def write_index(self, name: str) -> Index:
        """The index a bulk item targets: the index, an alias with one (or one write) index, or auto-create."""
        idx = self.indices.get(name)
        if idx is not None:
            return idx
        members = self.aliases().get(name)
        if members:
            writers = [m for m in members if self.indices[m].aliases[name].get("is_write_index")]
            if len(members) == 1 or len(writers) == 1:
                return self.indices[(writers or members)[0]]
            raise EsError(400, "illegal_argument_exception",
                          f"no write index is defined for alias [{name}]. The write index may be explicitly "
                          f"disabled using is_write_index=false or the alias points to multiple indices without "
                          f"one being designated as a write index")
        return self.create_index(name, None)


class ESTestServer:
    """The stand-in server; ``url`` once started. Thread-based; start/stop or use as a context manager."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, validate: bool = True) -> None:
        # validate=False stores sources unparsed (parsed on first read): the fast mode benches use.
        self.validate = validate
        self.faults = Faults()
        self.state = State(self.faults)
        self.stats: Counter[str] = Counter()
        self._stats_lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        self._httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "ESTestServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="es-test-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> "ESTestServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget all indices, templates, faults and counters (between tests sharing one server)."""
        with self.state.lock:
            self.state.indices.clear()
            self.state.templates.clear()
        self.faults.clear()
        with self._stats_lock:
            self.stats.clear()
            self.max_in_flight = 0

    def count(self, key: str, n: int = 1) -> None:
        with self._stats_lock:
            self.stats[key] += n

    def enter_flight(self) -> None:
        with self._stats_lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def leave_flight(self) -> None:
        with self._stats_lock:
            self._in_flight -= 1


def _handler_for(server: ESTestServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        es = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; without TCP_NODELAY, Nagle + delayed ACK add ~40 ms.
    disable_nagle_algorithm = True
    es: ESTestServer
    server_version = "es-test-server"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet by default
        pass

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = lambda self: self._dispatch()  # noqa: E731

    # ---- plumbing ---------------------------------------------------------------------------------
    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        split = urlsplit(self.path)
        params = dict(parse_qsl(split.query, keep_blank_values=True))
        parts = [unquote(p) for p in split.path.split("/") if p]
        self.compat = None
        path = split.path
        self.es.count(f"{self.command} {'/'.join(p if p.startswith('_') else '{x}' for p in parts) or '/'}")
        try:
            self._check_media_types(raw)
            if path.endswith("_bulk"):
                self.es.enter_flight()
            try:
                delay = self.es.faults.take_delay(path)
                if delay:
                    time.sleep(delay)
                drop = self.es.faults.take_drop(path)
                if drop is not None:
                    if drop:
                        self._route(self.command, parts, params, raw)
                    self.es.count("dropped")
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                status = self.es.faults.take_request_error(path)
                if status is not None:
                    self.es.count(f"injected {status}")
                    type_, reason = _REQUEST_ERRORS.get(status, ("exception", f"injected {status}"))
                    raise EsError(status, type_, reason)
                status, body = self._route(self.command, parts, params, raw)
            finally:
                if path.endswith("_bulk"):
                    self.es.leave_flight()
        except EsError as exc:
            status, body = exc.status, exc.body()
        except (ValueError, KeyError, TypeError, orjson.JSONDecodeError) as exc:
            status, body = 400, EsError(400, "x_content_parse_exception", f"[1:1] {exc}").body()
        if params.get("filter_path") and isinstance(body, (dict, list)) and status < 300:
            body = filter_path(body, params["filter_path"])
        self._send(status, body)

    def _check_media_types(self, raw: bytes) -> None:
        for header in ("Accept", "Content-Type"):
            value = self.headers.get(header) or ""
            found = _COMPAT.search(value)
            if found:
                if found.group(1) not in ("8", "9"):
                    raise EsError(400, "media_type_header_exception",
                                  "Invalid media-type value on headers [Accept, Content-Type]")
                self.compat = found.group(1)
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if raw and ctype and not (ctype.endswith("json") or ctype.endswith("ndjson")):
            raise EsError(406, "media_type_header_exception",
                          f"Content-Type header [{ctype}] is not supported")

    def _send(self, status: int, body: Any) -> None:
        payload = b"" if body is None else orjson.dumps(body)
        self.send_response(status)
        self.send_header("X-elastic-product", "Elasticsearch")
        ctype = ("application/vnd.elasticsearch+json;compatible-with=" + self.compat) if self.compat \
            else "application/json"
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD" and payload:
            self.wfile.write(payload)

    # ---- routes -----------------------------------------------------------------------------------
    def _route(self, method: str, parts: list[str], params: dict[str, str], raw: bytes) -> tuple[int, Any]:
        st = self.es.state
        body = orjson.loads(raw) if raw and not (parts and parts[-1] == "_bulk") else None
        n = len(parts)
        if n == 0:
            return 200, self._info()
        head = parts[0]
        if parts[-1] == "_bulk" and method in ("POST", "PUT"):
            return 200, self._bulk(raw, parts[0] if n == 2 else None, params)
        if head == "_index_template":
            return self._templates(method, parts[1] if n > 1 else None, body)
        if head == "_cluster" and n >= 2 and parts[1] == "health":
            with st.lock:
                count = len(st.indices)
            return 200, {"cluster_name": "es-test-server", "status": "green", "timed_out": False,
                         "number_of_nodes": 1, "number_of_data_nodes": 1, "active_primary_shards": count,
                         "active_shards": count, "relocating_shards": 0, "initializing_shards": 0,
                         "unassigned_shards": 0, "unassigned_primary_shards": 0, "delayed_unassigned_shards": 0,
                         "number_of_pending_tasks": 0, "number_of_in_flight_fetch": 0,
                         "task_max_waiting_in_queue_millis": 0, "active_shards_percent_as_number": 100.0}
        if head == "_cat" and n >= 2 and parts[1] == "indices":
            return 200, self._cat_indices(parts[2] if n > 2 else None, params)
        if head == "_aliases" and method == "POST":
            return self._alias_actions(body or {})
        if head in ("_alias", "_aliases") and n <= 2:
            return self._get_aliases(None, parts[1] if n > 1 else None, method)
        if head in ("_count", "_search", "_refresh"):
            parts = ["*", *parts]
            n += 1
        target = parts[0]
        op = parts[1] if n > 1 else None
        if op in ("_alias", "_aliases"):
            if method in ("PUT", "POST") and n > 2:
                return self._alias_actions({"actions": [{"add": {"index": target, "alias": parts[2], **(body or {})}}]})
            if method == "DELETE" and n > 2:
                return self._alias_actions({"actions": [{"remove": {"index": target, "alias": parts[2]}}]})
            return self._get_aliases(target, parts[2] if n > 2 else None, method)
        if op == "_count":
            hits = self._query(target, (body or {}).get("query"), params)
            return 200, {"count": len(hits), "_shards": self._shards(target, params)}
        if op == "_search":
            return 200, self._search(target, body or {}, params)
        if op == "_delete_by_query" and method == "POST":
            return 200, self._delete_by_query(target, body or {}, params)
        if op == "_refresh":
            return 200, {"_shards": self._shards(target, params, replicas=True)}
        if op in ("_doc", "_create") and n == 3 and method in ("PUT", "POST"):
            return self._index_one("create" if op == "_create" or params.get("op_type") == "create" else "index",
                                   target, parts[2], raw, params)
        if op == "_doc" and n == 3:
            return self._doc(method, target, parts[2])
        if op is None:
            return self._index(method, target, body, params)
        raise EsError(400, "illegal_argument_exception",
                      f"request [{method} /{'/'.join(parts)}] is not supported by the test server")

    def _info(self) -> dict[str, Any]:
        return {
            "name": "es-test-server", "cluster_name": "es-test-server", "cluster_uuid": self.es.state.cluster_uuid,
            "version": {"number": VERSION, "build_flavor": "default", "build_type": "docker",
                        "build_hash": "0" * 40, "build_date": "2025-07-01T00:00:00.000000000Z",
                        "build_snapshot": False, "lucene_version": "10.2.2",
                        "minimum_wire_compatibility_version": "8.19.0",
                        "minimum_index_compatibility_version": "8.0.0"},
            "tagline": "You Know, for Search",
        }

    def _shards(self, target: str, params: dict[str, str], replicas: bool = False) -> dict[str, int]:
        with self.es.state.lock:
            n = len(self.es.state.resolve(target, ignore_unavailable=params.get("ignore_unavailable") == "true"))
        return {"total": n * (2 if replicas else 1), "successful": n, "skipped": 0, "failed": 0}

    def _templates(self, method: str, name: str | None, body: Any) -> tuple[int, Any]:
        st = self.es.state
        with st.lock:
            if method == "PUT" or method == "POST":
                if not name or not isinstance(body, dict) or "index_patterns" not in body:
                    raise EsError(400, "action_request_validation_exception",
                                  "Validation Failed: 1: index patterns are missing;")
                for other, tpl in st.templates.items():
                    overlap = set(tpl.get("index_patterns", [])) & set(body["index_patterns"])
                    if other != name and overlap and tpl.get("priority", 0) == body.get("priority", 0):
                        raise EsError(400, "illegal_argument_exception",
                                      f"index template [{name}] has index patterns {sorted(overlap)} matching "
                                      f"patterns from existing templates [{other}] with the same priority")
                st.templates[name] = body
                return 200, {"acknowledged": True}
            names = [t for t in st.templates if name is None or fnmatch.fnmatchcase(t, name)]
            if name and not names:
                raise EsError(404, "resource_not_found_exception", f"index template matching [{name}] not found")
            if method == "DELETE":
                for t in names:
                    del st.templates[t]
                return 200, {"acknowledged": True}
            if method == "HEAD":
                return 200, None
            return 200, {"index_templates": [{"name": t, "index_template": st.templates[t]} for t in names]}

    def _index(self, method: str, target: str, body: Any, params: dict[str, str]) -> tuple[int, Any]:
        st = self.es.state
        with st.lock:
            if method == "PUT":
                idx = st.create_index(target, body)
                return 200, {"acknowledged": True, "shards_acknowledged": True, "index": idx.name}
            if method == "DELETE":
                aliases = st.aliases()
                names: list[str] = []
                for part in target.split(","):
                    if "*" in part or part == "_all":
                        raise EsError(400, "illegal_argument_exception",
                                      "Wildcard expressions or all indices are not allowed")
                    if part in aliases:
                        raise EsError(400, "illegal_argument_exception",
                                      f"The provided expression [{part}] matches an alias, specify the "
                                      f"corresponding concrete indices instead.")
                    if part in st.indices:
                        names.append(part)
                    elif params.get("ignore_unavailable") != "true":
                        raise _not_found(part)
                for name in names:
                    del st.indices[name]
                return 200, {"acknowledged": True}
            names = st.resolve(target, ignore_unavailable=params.get("ignore_unavailable") == "true")
            if method == "HEAD":
                return 200, None
            return 200, {n: {"aliases": st.indices[n].aliases, "mappings": st.indices[n].mappings,
                             "settings": {"index": {"uuid": st.indices[n].uuid, "provided_name": n,
                                                    "creation_date": str(int(st.indices[n].created * 1000)),
                                                    "number_of_shards": "1", "number_of_replicas": "1"}}}
                         for n in names}

    def _index_one(self, op: str, target: str, doc_id: str, raw: bytes, params: dict[str, str]) -> tuple[int, Any]:
        """Single-document index/create: the bulk item logic, answered as its own response."""
        meta = {"_index": target, "_id": doc_id, **{k: params[k] for k in ("version", "version_type") if k in params}}
        with self.es.state.lock:
            result = self._bulk_item(self.es.state, self.es.faults, op, meta, raw.strip(), None)
        status = result.pop("status")
        if "error" in result:
            error = result["error"]
            return status, {"error": {"root_cause": [error], **error}, "status": status}
        return status, result

    def _doc(self, method: str, target: str, doc_id: str) -> tuple[int, Any]:
        st = self.es.state
        with st.lock:
            names = st.resolve(target)
            if len(names) != 1:
                raise EsError(400, "illegal_argument_exception",
                              f"alias [{target}] has more than one index associated with it, can't execute a "
                              f"single index op")
            idx = st.indices[names[0]]
            entry = idx.docs.get(doc_id)
            if entry is None:
                return 404, {"_index": idx.name, "_id": doc_id, "found": False}
            if method == "DELETE":
                del idx.docs[doc_id]
                idx.seq_no += 1
                return 200, {"_index": idx.name, "_id": doc_id, "_version": entry[0] + 1, "result": "deleted",
                             "_shards": {"total": 2, "successful": 1, "failed": 0}, "_seq_no": idx.seq_no,
                             "_primary_term": 1}
            return 200, {"_index": idx.name, "_id": doc_id, "_version": entry[0], "_seq_no": entry[1],
                         "_primary_term": 1, "found": True, "_source": source_of(entry)}

    def _alias_actions(self, body: dict[str, Any]) -> tuple[int, Any]:
        st = self.es.state
        with st.lock:
            for action in body.get("actions", []):
                (kind, spec), = action.items()
                indices = spec.get("indices") or [spec.get("index")]
                aliases = spec.get("aliases") or [spec.get("alias")]
                names = [n for i in indices for n in st.resolve(i)]
                if not names:
                    raise _not_found(",".join(map(str, indices)))
                for name in names:
                    idx = st.indices[name]
                    for alias in aliases:
                        if kind == "add":
                            if alias in st.indices:
                                raise EsError(400, "invalid_alias_name_exception",
                                              f"Invalid alias name [{alias}]: an index or data stream exists "
                                              f"with the same name as the alias")
                            extra = {k: v for k, v in spec.items() if k in ("is_write_index", "filter", "routing")}
                            idx.aliases[alias] = extra
                        elif kind == "remove":
                            if alias not in idx.aliases and not spec.get("must_exist") is False:
                                raise EsError(404, "aliases_not_found_exception", f"aliases [{alias}] missing",
                                              **{"resource.type": "aliases", "resource.id": alias})
                            idx.aliases.pop(alias, None)
                        elif kind == "remove_index":
                            st.indices.pop(name, None)
            return 200, {"acknowledged": True, "errors": False}

    def _get_aliases(self, target: str | None, alias: str | None, method: str) -> tuple[int, Any]:
        st = self.es.state
        with st.lock:
            names = st.resolve(target) if target else sorted(st.indices)
            out: dict[str, Any] = {}
            for n in names:
                selected = {a: v for a, v in st.indices[n].aliases.items()
                            if alias is None or any(fnmatch.fnmatchcase(a, p) for p in alias.split(","))}
                if selected or alias is None:
                    out[n] = {"aliases": selected}
            if alias and not out:
                return 404, {"error": f"alias [{alias}] missing", "status": 404}
            return 200, (None if method == "HEAD" else out)

    def _cat_indices(self, target: str | None, params: dict[str, str]) -> list[dict[str, str]]:
        st = self.es.state
        with st.lock:
            names = st.resolve(target, ignore_unavailable=True) if target else sorted(st.indices)
            rows = []
            for n in names:
                idx = st.indices[n]
                size = sum(e[3] for e in idx.docs.values())
                rows.append({"health": "green", "status": "open", "index": n, "uuid": idx.uuid, "pri": "1",
                             "rep": "0", "docs.count": str(len(idx.docs)), "docs.deleted": "0",
                             "store.size": str(size), "pri.store.size": str(size), "dataset.size": str(size)})
            return rows

    def _query(self, target: str, query: dict[str, Any] | None,
               params: dict[str, str]) -> list[tuple[str, str, dict[str, Any], list[Any]]]:
        st = self.es.state
        with st.lock:
            names = st.resolve(target, ignore_unavailable=params.get("ignore_unavailable") == "true")
            return [(n, doc_id, source_of(entry), entry) for n in names
                    for doc_id, entry in st.indices[n].docs.items()
                    if matches(query, source_of(entry), doc_id, n)]

    def _delete_by_query(self, target: str, body: dict[str, Any], params: dict[str, str]) -> dict[str, Any]:
        started = time.perf_counter()
        hits = self._query(target, body.get("query"), params)
        with self.es.state.lock:
            for name, doc_id, _src, _entry in hits:
                idx = self.es.state.indices.get(name)
                if idx is not None and idx.docs.pop(doc_id, None) is not None:
                    idx.seq_no += 1
        return {"took": int((time.perf_counter() - started) * 1000), "timed_out": False, "total": len(hits),
                "deleted": len(hits), "batches": 1, "version_conflicts": 0, "noops": 0,
                "retries": {"bulk": 0, "search": 0}, "throttled_millis": 0, "requests_per_second": -1.0,
                "throttled_until_millis": 0, "failures": []}

    def _search(self, target: str, body: dict[str, Any], params: dict[str, str]) -> dict[str, Any]:
        started = time.perf_counter()
        hits = self._query(target, body.get("query"), params)
        for spec in reversed(body.get("sort") or []):
            fld, order = (spec, "asc") if isinstance(spec, str) else next(iter(spec.items()))
            order = order.get("order", "asc") if isinstance(order, dict) else order
            present = [h for h in hits if _field_values(h[2], fld, h[1], h[0])]
            missing = [h for h in hits if not _field_values(h[2], fld, h[1], h[0])]
            present.sort(key=lambda h: _compare_key(_field_values(h[2], fld, h[1], h[0])[0]),
                         reverse=order == "desc")
            hits = present + missing
        after = body.get("search_after")
        if after is not None:  # pages after a sort position (the sort fields' values of the last hit)
            fields = [spec if isinstance(spec, str) else next(iter(spec)) for spec in body.get("sort") or []]
            hits = [h for h in hits if [_compare_key(_field_values(h[2], f, h[1], h[0])[0]) for f in fields]
                    > [_compare_key(v) for v in after]]
        size = int(body.get("size", params.get("size", 10)))
        start = int(body.get("from", params.get("from", 0)))
        with_version = body.get("version") or params.get("version") == "true"
        page = []
        for n, doc_id, src, entry in hits[start:start + size]:
            hit: dict[str, Any] = {"_index": n, "_id": doc_id, "_score": 1.0, "_source": src}
            if with_version:
                hit["_version"] = entry[0]
            if body.get("seq_no_primary_term"):
                hit["_seq_no"], hit["_primary_term"] = entry[1], 1
            if body.get("sort"):
                hit["sort"] = [next(iter(_field_values(src, spec if isinstance(spec, str) else next(iter(spec)), doc_id, n)),
                                    None) for spec in body["sort"]]
            page.append(hit)
        out: dict[str, Any] = {
            "took": int((time.perf_counter() - started) * 1000), "timed_out": False,
            "_shards": self._shards(target, params),
            "hits": {"total": {"value": len(hits), "relation": "eq"}, "max_score": 1.0 if page else None,
                     "hits": page},
        }
        aggs = body.get("aggs") or body.get("aggregations")
        if aggs:
            out["aggregations"] = _aggregate(aggs, [(h[0], h[1], h[2]) for h in hits])
        return out

    # ---- bulk ---------------------------------------------------------------------------------------
    def _bulk(self, raw: bytes, default_index: str | None, params: dict[str, str]) -> dict[str, Any]:
        started = time.perf_counter()
        lines = raw.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()
        else:
            raise EsError(400, "illegal_argument_exception",
                          "The bulk request must be terminated by a newline [\\n]")
        items: list[dict[str, Any]] = []
        errors = False
        spec = params.pop("filter_path", "")
        lean = bool(spec) and set(spec.split(",")) <= _LEAN_FILTERS
        st = self.es.state
        fast = lean and not self.es.validate and not faults_armed(self.es.faults)
        cache: dict[str, Index] = {}
        faults = self.es.faults
        i = 0
        with st.lock:
            while i < len(lines):
                action = orjson.loads(lines[i])
                i += 1
                (op, meta), = action.items()
                if op not in ("index", "create", "delete", "update"):
                    raise EsError(400, "illegal_argument_exception",
                                  f"Malformed action/metadata line [{i}], expected one of [create, delete, index, "
                                  f"update] but found [{op}]")
                source_raw = None
                if op != "delete":
                    source_raw = lines[i]
                    i += 1
                if fast and op == "index" and meta.get("version_type") == "external_gte":
                    # Fast path (benches): unchecked source, no faults armed, lean response.
                    idx = self._fast_index(st, meta.get("_index") or default_index or "", cache)
                    if idx is not None and meta.get("_id") is not None:
                        doc_id, version = str(meta["_id"]), int(meta["version"])
                        current = idx.docs.get(doc_id)
                        if current is None or version >= current[0]:
                            idx.seq_no += 1
                            idx.docs[doc_id] = [version, idx.seq_no, source_raw, len(source_raw)]
                            items.append(_LEAN_CREATED if current is None else _LEAN_UPDATED)
                            continue
                result = self._bulk_item(st, faults, op, meta, source_raw, default_index, lean)
                errors = errors or "error" in result
                items.append({op: result})
        self.es.count("bulk_items", len(items))
        body = {"errors": errors, "took": int((time.perf_counter() - started) * 1000), "items": items}
        if spec:
            if lean:  # successes were built already filtered; filter the error items only
                wanted = spec.split(",")
                body["items"] = [it if "error" not in next(iter(it.values())) else filter_path(it, ",".join(
                    w[len("items."):] for w in wanted if w.startswith("items."))) for it in items]
                if "errors" not in wanted:
                    del body["errors"]
                del body["took"]
            else:
                body = filter_path(body, spec)
        return body

    @staticmethod
    def _fast_index(st: State, name: str, cache: dict[str, Index]) -> Index | None:
        idx = cache.get(name)
        if idx is None:
            idx = st.indices.get(name)
            if idx is not None:
                cache[name] = idx
        return idx

    def _bulk_item(self, st: State, faults: Faults, op: str, meta: dict[str, Any], source_raw: bytes | None,
                   default_index: str | None, lean: bool = False) -> dict[str, Any]:
        name = meta.get("_index") or default_index
        doc_id = meta.get("_id")
        if doc_id is None:
            doc_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode()[:20]
        doc_id = str(doc_id)
        if not name:
            return {"_index": None, "_id": doc_id, "status": 400, "error": {
                "type": "action_request_validation_exception", "reason": "Validation Failed: 1: index is missing;"}}
        try:
            idx = st.write_index(name)
        except EsError as exc:
            return {"_index": name, "_id": doc_id, "status": exc.status,
                    "error": {"type": exc.type, "reason": exc.reason, **exc.extra}}
        base = {"_index": idx.name, "_id": doc_id}
        fault = faults.item_fault(doc_id)
        if fault == "reject":
            return {**base, "status": 429, "error": {
                "type": "es_rejected_execution_exception",
                "reason": "rejected execution of primary operation [shard_detail=[%s][0][P], shard_operation_bytes=1024, "
                          "max_write_bytes=0]" % idx.name}}
        if fault == "mapping":
            return {**base, "status": 400, "error": {
                "type": "mapper_parsing_exception", "reason": "injected mapping failure",
                "index_uuid": idx.uuid, "shard": "0", "index": idx.name}}
        current = idx.docs.get(doc_id)
        if op == "delete":
            if current is None:
                idx.seq_no += 1
                return {**base, "_version": 1, "result": "not_found", "_shards": {"total": 2, "successful": 1,
                        "failed": 0}, "_seq_no": idx.seq_no, "_primary_term": 1, "status": 404}
            del idx.docs[doc_id]
            idx.seq_no += 1
            return {**base, "_version": current[0] + 1, "result": "deleted",
                    "_shards": {"total": 2, "successful": 1, "failed": 0}, "_seq_no": idx.seq_no,
                    "_primary_term": 1, "status": 200}
        if op == "update":
            return {**base, "status": 400, "error": {"type": "illegal_argument_exception",
                                                     "reason": "update is not supported by the test server"}}
        source: Any = source_raw or b""
        if self.es.validate:
            try:
                source = orjson.loads(source)
                if not isinstance(source, dict):
                    raise ValueError("source is not an object")
            except (orjson.JSONDecodeError, ValueError) as exc:
                return {**base, "status": 400, "error": {"type": "document_parsing_exception",
                                                         "reason": f"[1:1] failed to parse: {exc}"}}
        problem = _check_fields(idx.checker, source, "") if self.es.validate else None
        if problem:
            return {**base, "status": 400, "error": {"type": "document_parsing_exception",
                                                     "reason": f"[1:2] {problem} with id '{doc_id}'",
                                                     "caused_by": {"type": "illegal_argument_exception",
                                                                   "reason": problem}}}
        version_type = meta.get("version_type", "internal")
        if op == "create" and current is not None:
            return {**base, "status": 409, "error": self._conflict(idx, doc_id, "document already exists")}
        if version_type in ("external", "external_gte"):
            version = int(meta["version"])
            if current is not None:
                ok = version >= current[0] if version_type == "external_gte" else version > current[0]
                if not ok:
                    rel = "higher or equal to" if version_type == "external" else "higher than"
                    reason = (f"version conflict, current version [{current[0]}] is {rel} the one provided "
                              f"[{version}]")
                    return {**base, "status": 409, "error": self._conflict(idx, doc_id, reason)}
        else:
            version = current[0] + 1 if current is not None else 1
        idx.seq_no += 1
        idx.docs[doc_id] = [version, idx.seq_no, source, len(source_raw or b"")]
        created = current is None
        if lean:
            return {"status": 201 if created else 200, "result": "created" if created else "updated"}
        return {**base, "_version": version, "result": "created" if created else "updated",
                "_shards": {"total": 2, "successful": 1, "failed": 0}, "_seq_no": idx.seq_no,
                "_primary_term": 1, "status": 201 if created else 200}

    @staticmethod
    def _conflict(idx: Index, doc_id: str, reason: str) -> dict[str, Any]:
        return {"type": "version_conflict_engine_exception", "reason": f"[{doc_id}]: {reason}",
                "index_uuid": idx.uuid, "shard": "0", "index": idx.name}


@contextlib.contextmanager
def spawn(*args: str) -> Iterator[str]:
    """Run the server in its own process (``main``'s options) and yield its URL; stopped on exit.

    Benches and memory tests use this so the server's CPU and memory are not counted as the client's."""
    proc = subprocess.Popen([sys.executable, "-m", "crawl_assets_tests.es_server", *args], stdout=subprocess.PIPE,
                            text=True, cwd=str(Path(__file__).resolve().parents[1]))
    try:
        url = (proc.stdout.readline() if proc.stdout else "").strip()
        if not url.startswith("http"):
            raise RuntimeError(f"the ES test server did not start (exit code {proc.poll()})")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> None:
    """Serve in the foreground (own process): prints the URL on the first line of stdout."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--no-validate", action="store_true",
                        help="store sources unchecked and unparsed until read (fast mode for benches)")
    parser.add_argument("--slow", type=float, default=0.0, help="delay every bulk response by this many seconds")
    args = parser.parse_args(argv)
    server = ESTestServer(args.host, args.port, validate=not args.no_validate)
    if args.slow:
        server.faults.slow(args.slow)
    print(server.url, flush=True)
    try:
        server._httpd.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
