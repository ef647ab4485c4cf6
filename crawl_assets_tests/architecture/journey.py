"""The journey of one record through the product's files: a Hacker News story from the stand-in's answer page
through the raw, normalize, relate and index steps on a real node to an API search that finds it.

``Tracer`` (``sys.setprofile`` and ``threading.setprofile``) follows the innermost frame of product code
(``crawl_assets/``) on every thread: the files that ran and the moves, each time that frame changes file. A
first run, untraced, loads every module and warms every cache, so imports do not count as the journey.

``python -m crawl_assets_tests.architecture.journey`` prints the figures (a real node is started, or
``CRAWL_ES_URL`` is used), the files by how often they were entered and the busiest moves.
"""

from __future__ import annotations

import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import crawl_assets

PRODUCT = str(Path(crawl_assets.__file__).resolve().parent) + "/"


@dataclass
class Journey:
    entered: Counter[str] = field(default_factory=Counter)  # file -> times control moved into it
    moves: Counter[tuple[str, str]] = field(default_factory=Counter)  # (from, to) -> times

    @property
    def files(self) -> int:
        return len(self.entered)

    @property
    def move_count(self) -> int:
        return sum(self.moves.values())

    def report(self, top: int = 15) -> str:
        lines = [f"files: {self.files}", f"moves: {self.move_count}", "", "files, by moves into them:"]
        lines += [f"  {n:6d}  {f}" for f, n in sorted(self.entered.items(), key=lambda i: (-i[1], i[0]))]
        lines += ["", f"the {top} busiest moves:"]
        lines += [f"  {n:6d}  {a} -> {b}" for (a, b), n in self.moves.most_common(top)]
        return "\n".join(lines)


class Tracer:
    """The innermost product frame of each thread, followed while active."""

    def __init__(self) -> None:
        self.journey = Journey()
        self._current: dict[int, str | None] = {}
        self._product: dict[Any, str | None] = {}  # code object -> product-relative file, or None
        self._lock = threading.Lock()

    def _file(self, frame: FrameType) -> str | None:
        code = frame.f_code
        try:
            return self._product[code]
        except KeyError:
            name = code.co_filename
            rel = name[len(PRODUCT):] if name.startswith(PRODUCT) else None
            self._product[code] = rel
            return rel

    def _innermost(self, frame: FrameType | None) -> str | None:
        while frame is not None:
            rel = self._file(frame)
            if rel is not None:
                return rel
            frame = frame.f_back
        return None

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:  # noqa: ARG002
        if event == "call":
            now = self._file(frame)
            if now is None:
                return
        elif event == "return":
            if self._file(frame) is None:
                return
            now = self._innermost(frame.f_back)
        else:
            return
        thread = threading.get_ident()
        before = self._current.get(thread)
        self._current[thread] = now
        if now is not None and now != before:
            with self._lock:
                self.journey.entered[now] += 1
                if before is not None:
                    self.journey.moves[(before, now)] += 1

    @contextmanager
    def active(self) -> Iterator[Journey]:
        threading.setprofile(self._profile)
        sys.setprofile(self._profile)
        try:
            yield self.journey
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]


def _run(base: Path, es_url: str, tenant: str, tracer: Tracer | None) -> int:
    """One story synced, normalized, related and indexed for ``tenant``, then found through the API; the
    number of hits (under ``tracer`` when given)."""
    import dagster as dg
    from fastapi.testclient import TestClient

    from crawl_assets.api.app import create_app
    from crawl_assets.api.access import KeyStore
    from crawl_assets.core import catalog
    from crawl_assets.orchestration.assets import derived_assets, raw_asset
    from crawl_assets.orchestration.resources import LakeResource, RegistryResource
    from crawl_assets.sdk.rest_resource import resource_class
    from crawl_assets_tests.es_node.fixtures import resource
    from crawl_assets_tests.sources.hackernews.standin import HackerNewsServer, make_items

    key = f"{tenant}.hackernews.tool"
    registry = base / f"{tenant}.yaml"
    registry.write_text("sources:\n  - {name: tool, tenant: %s, platform: hackernews, kind: search_query, "
                        "identifier: \"feedback tool\"}\n" % tenant)
    store = KeyStore(f"sqlite:///{base / 'keys.db'}")
    api_key = store.create(tenant, "journey")[1]
    store.close()
    raw = raw_asset("hackernews")
    es = resource(es_url)
    traced = tracer.active() if tracer is not None else _nothing()
    with HackerNewsServer(items=make_items(1, 0)) as srv, dg.instance_for_test() as instance, es.get_client() as client:
        instance.add_dynamic_partitions("hackernews_sources", [key])
        resources = {"lake": LakeResource(root=str(base / "lake")), "registry": RegistryResource(path=str(registry)),
                     "hackernews": resource_class(catalog.spec("hackernews"))(base_url=srv.url), "elasticsearch": es}
        with traced:
            dg.materialize([raw, *derived_assets("hackernews", raw)], partition_key=key, instance=instance,
                           resources=resources)
            client.indices.refresh(index=f"crawl-records-{tenant}*")
            with TestClient(create_app(client, KeyStore(f"sqlite:///{base / 'keys.db'}", cache_seconds=0))) as api:
                answer = api.get("/v1/search", params={"q": "feedback"}, headers={"Authorization": f"Bearer {api_key}"})
    assert answer.status_code == 200, answer.text[:500]
    return len(answer.json()["records"])


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def trace(base: Path, es_url: str) -> tuple[Journey, int]:
    """The journey of one record (after an untraced warm-up run of another tenant), and the API's hits."""
    _run(base, es_url, "warmup", None)
    tracer = Tracer()
    hits = _run(base, es_url, "journey", tracer)
    return tracer.journey, hits


def main() -> int:
    import os

    from crawl_assets_tests.es_node.node import RealNode

    with tempfile.TemporaryDirectory() as tmp:
        url = os.environ.get("CRAWL_ES_URL", "")
        if url:
            journey, hits = trace(Path(tmp), url)
        else:
            with RealNode() as node:
                journey, hits = trace(Path(tmp), node.url)
    print(journey.report())
    print(f"\nthe API found {hits} record(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
