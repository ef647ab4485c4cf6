"""The replay ceiling: the documents a load left in the node, read back and sent again by plain bulk requests.

What a load sent (every record and edge document of a tenant, with its ``_id`` and external version) is read
back from the node and replayed into a fresh tenant's indices (created beforehand from the same templates)
with hand-built NDJSON bodies of ``body_mib``, ``in_flight`` requests at once, and refresh off during the
load (back on, and one refresh, at the end, inside the timing): the node's work for exactly those documents,
with no client work but sending. ``best_replay`` tunes the requests in flight and the order of the two families' bodies (the best of several, each run
checked to have indexed every document). Used by ``bench/pipeline.py``, ``bench/es_sink.py`` and
``bench/index_load.py``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

FAMILIES = ("records", "edges")


@dataclass
class Replayed:
    docs: int
    seconds: float
    node_cpu_s: float
    in_flight: int = 3
    tried: str = ""  # every in-flight value and order tried, with its docs/s (``best_replay``)
    interleaved: bool = False

    @property
    def docs_per_s(self) -> float:
        return self.docs / self.seconds


def node_cpu_seconds(client: Any, settle_s: float = 180.0) -> float:
    """CPU seconds the node's process has used (all nodes summed), read once no merge is running (up to
    ``settle_s``): a load's merges go on after its last request and are its work, not the next one's."""
    deadline = time.monotonic() + settle_s
    while time.monotonic() < deadline:
        merges = client.nodes.stats(metric="indices", index_metric="merge")["nodes"]
        if not any(n["indices"]["merges"]["current"] for n in merges.values()):
            break
        time.sleep(0.5)
    stats = client.nodes.stats(metric="process")["nodes"]
    return sum(n["process"]["cpu"]["total_in_millis"] for n in stats.values()) / 1000


def read_back(client: Any, tenant: str, target: str) -> list[bytes]:
    """Bulk lines of every record and edge document of ``tenant``, aimed at the same indices of ``target``;
    records get their ``text_lemma`` back (the template keeps it out of ``_source``; the load sent it)."""
    from elasticsearch import helpers

    from crawl_assets.index.naming import logical_name
    from crawl_assets.index.documents import with_lemmas
    from crawl_assets.index.naming import index_prefix, read_alias

    lines = []
    for family in FAMILIES:
        old, new = index_prefix(family, tenant), index_prefix(family, target)
        for hit in helpers.scan(client, index=read_alias(family, tenant), query={"query": {"match_all": {}}},
                                version=True, size=5000, ignore_unavailable=True):
            index = new + logical_name(hit["_index"])[len(old):]
            action = {"index": {"_index": index, "_id": hit["_id"], "version": hit["_version"],
                                "version_type": "external_gte"}}
            source = with_lemmas(hit["_source"]) if family == "records" else hit["_source"]
            lines.append(orjson.dumps(action) + b"\n" + orjson.dumps(source) + b"\n")
    return lines


def bodies(lines: list[bytes], limit: int) -> Iterator[bytes]:
    body: list[bytes] = []
    size = 0
    for line in lines:
        if body and size + len(line) > limit:
            yield b"".join(body)
            body, size = [], 0
        body.append(line)
        size += len(line)
    if body:
        yield b"".join(body)


def replay(client: Any, lines: list[bytes], target: str, *, body_mib: int = 8, in_flight: int = 3,
           interleave: bool = False) -> Replayed:
    """Send ``lines`` (from ``read_back``) into ``target``'s indices, created first; refresh off while loading.
    ``interleave``: the families' bodies alternate in proportion (as a load sends them), not one family after
    the other."""
    from crawl_assets.index.indices import ensure_index, ensure_template, set_refresh, template_refresh
    from crawl_assets.index.naming import parse_index

    names: dict[str, str] = {}
    targets = [orjson.loads(line[:line.index(b"\n")])["index"]["_index"] for line in lines]
    for index in targets:
        if index not in names:
            names[index] = parse_index(index)[0]  # type: ignore[index]
            ensure_template(client, names[index])
            ensure_index(client, index, names[index], target)
    limit = body_mib * 1024 * 1024
    if interleave:
        work = mixed([list(bodies([line for line, index in zip(lines, targets) if names[index] == family], limit))
                      for family in FAMILIES])
    else:
        work = list(bodies(lines, limit))
    errors: list[str] = []
    lock = threading.Lock()
    fast = client.options(request_timeout=300)

    def send() -> None:
        while True:
            with lock:
                if not work:
                    return
                body = work.pop(0)
            resp = fast.bulk(operations=body, filter_path="errors,items.*.error")
            if resp.get("errors"):
                errors.append(str(resp["items"][:1]))

    cpu0, started = node_cpu_seconds(client), time.perf_counter()
    set_refresh(client, sorted(names), "-1")
    threads = [threading.Thread(target=send) for _ in range(in_flight)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for family in FAMILIES:
        set_refresh(client, sorted(n for n, f in names.items() if f == family), template_refresh(family))
    client.indices.refresh(index=",".join(sorted(names)))
    seconds = time.perf_counter() - started
    cpu = node_cpu_seconds(client) - cpu0
    if errors:
        raise SystemExit(f"the replay was refused: {errors[0]}")
    indexed = sum(client.count(index=",".join(sorted(n for n, f in names.items() if f == family)))["count"]
                  for family in FAMILIES if any(f == family for f in names.values()))
    if indexed != len(lines):  # a ceiling that indexed less than it was given is no ceiling
        raise SystemExit(f"the replay indexed {indexed} of {len(lines)} documents")
    return Replayed(len(lines), seconds, cpu, in_flight, interleaved=interleave)


def mixed(queues: list[list[bytes]]) -> list[bytes]:
    """The bodies of every queue, each queue's in order, merged so each is spread evenly over the whole."""
    keyed = [((i + 0.5) / len(queue), n, body) for n, queue in enumerate(queues) for i, body in enumerate(queue)]
    return [body for _, _, body in sorted(keyed, key=lambda k: (k[0], k[1]))]


def best_replay(client: Any, lines: list[bytes], target: str, *, body_mib: int = 8,
                in_flights: tuple[int, ...] = (2, 3, 4)) -> Replayed:
    """The ceiling tuned: ``lines`` replayed with each number of requests in flight, one family after the other
    and interleaved (``target`` dropped after each), the fastest kept; ``tried`` names them all."""
    if not lines:  # a ceiling of nothing is no ceiling (the load's indices were dropped under the bench?)
        raise SystemExit(f"nothing to replay into {target}: the load's documents are not in the node")
    runs = []
    for in_flight in in_flights:
        for interleave in (False, True):
            runs.append(replay(client, lines, target, body_mib=body_mib, in_flight=in_flight, interleave=interleave))
            drop(client, target)
    best = max(runs, key=lambda r: r.docs_per_s)
    best.tried = ", ".join(f"{r.in_flight} in flight{' interleaved' if r.interleaved else ''} {r.docs_per_s:,.0f}/s"
                           for r in runs)
    return best


def warm(client: Any, tenant: str, rounds: int = 2) -> None:
    """Warm the node's JIT on the documents a warm-up load left in ``tenant``: they are replayed ``rounds``
    times into a scratch tenant (one load is not enough: a node's indexing CPU per document keeps falling
    over its first few hundred thousand documents, and a cold step beside a warm ceiling is no comparison)."""
    lines = read_back(client, tenant, "warmup-replay")
    for _ in range(rounds):
        replay(client, lines, "warmup-replay")
        drop(client, "warmup-replay")


def drop(client: Any, tenant: str) -> None:
    """Delete the tenant's record and edge indices (by name: clusters refuse wildcard deletes by default)."""
    from crawl_assets.index.naming import index_pattern

    names = client.indices.get(index=",".join(index_pattern(f, tenant) for f in FAMILIES), allow_no_indices=True,
                               ignore_unavailable=True).body
    if names:
        client.indices.delete(index=",".join(sorted(names)))
