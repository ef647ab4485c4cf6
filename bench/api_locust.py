"""bench/api.py's load (run by locust, headless): the same weighted mix of requests, at the same fixed rate,
once through the API (``requests``, the client locust's HttpUser is built on) and once straight to
Elasticsearch with the official Python client. Both sides time the call and the decoding of its JSON
answer, and count an answer that is empty (or differs in shape) as a failure.

Environment: BENCH_KEY (API key), BENCH_API, BENCH_ES (URLs), BENCH_RATE_PER_USER (requests/s per user).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gevent  # noqa: E402
import requests  # noqa: E402
from elasticsearch import Elasticsearch  # noqa: E402
from locust import User, constant_throughput, events, task  # noqa: E402

from api_requests import ALIAS, REQUESTS, api_answer, direct_answer, non_empty  # noqa: E402

RATE = float(os.environ.get("BENCH_RATE_PER_USER", "1"))
TIMES: dict[str, list[float]] = defaultdict(list)
FAILURES: Counter = Counter()
ERRORS: list[str] = []


@events.request.add_listener
def _record(name: str, response_time: float, exception: Exception | None, **_: object) -> None:
    if exception is None:
        TIMES[name].append(response_time)
    else:
        FAILURES[name] += 1
        if len(ERRORS) < 10:
            ERRORS.append(f"{name}: {exception!r}"[:300])


@events.quitting.add_listener
def _dump(**_: object) -> None:
    Path(os.environ["BENCH_TIMINGS"]).write_text(json.dumps({"times": TIMES, "failures": FAILURES, "errors": ERRORS}))


class _Timed(User):
    abstract = True
    wait_time = constant_throughput(RATE)
    side = ""

    def stagger(self) -> None:
        """Start at a random point of the first period: users started together would otherwise stay in phase
        and send their requests in bursts (queueing, not the rate asked for)."""
        gevent.sleep(random.uniform(0, 1 / RATE))

    def call(self, name: str) -> list:
        raise NotImplementedError

    def timed(self, name: str) -> None:
        began = time.perf_counter()
        error: Exception | None = None
        size = 0
        try:
            answer = self.call(name)
            size = len(answer)
            if not non_empty(name, answer):
                raise AssertionError(f"{self.side} {name}: empty answer")
        except Exception as exc:  # noqa: BLE001 - reported to locust as a failure
            error = exc
        self.environment.events.request.fire(request_type=self.side, name=f"{self.side} {name}",
                                             response_time=(time.perf_counter() - began) * 1000,
                                             response_length=size, exception=error, context={})

    @task(REQUESTS["search"][3])
    def search(self) -> None:
        self.timed("search")

    @task(REQUESTS["top_hashtags"][3])
    def top_hashtags(self) -> None:
        self.timed("top_hashtags")

    @task(REQUESTS["timeline"][3])
    def timeline(self) -> None:
        self.timed("timeline")

    @task(REQUESTS["record"][3])
    def record(self) -> None:
        self.timed("record")


class Api(_Timed):
    side = "api"

    def on_start(self) -> None:
        self.session = requests.Session()
        self.session.headers["Authorization"] = "Bearer " + os.environ["BENCH_KEY"]
        self.base = os.environ["BENCH_API"]
        self.stagger()

    def call(self, name: str) -> list:
        path, params, _, _ = REQUESTS[name]
        resp = self.session.get(self.base + path, params=params, timeout=60)
        resp.raise_for_status()
        return api_answer(name, resp.json())


class Direct(_Timed):
    side = "direct"

    def on_start(self) -> None:
        self.es = Elasticsearch(os.environ["BENCH_ES"], request_timeout=60)
        self.stagger()

    def call(self, name: str) -> list:
        _, _, body, _ = REQUESTS[name]
        return direct_answer(name, self.es.search(index=ALIAS, ignore_unavailable=True, **body).body)
