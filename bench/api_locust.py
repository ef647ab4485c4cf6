"""bench/api.py's load (run by locust, headless): an open-loop schedule of requests at a fixed rate, each one
sent once through the API (``requests``, the client locust's HttpUser is built on) and once straight to
Elasticsearch with the official Python client. Both sides time the call and the decoding of its JSON
answer, and count an answer that is empty (or differs in shape) as a failure.

The plan (BENCH_PLAN, a JSON file written by bench/api.py) lists pairs ``(endpoint, variant)``. Slot ``j``
is due at ``T0 + j * gap``; slots ``2p`` and ``2p + 1`` send pair ``p``, the API first when ``p`` is even,
Elasticsearch first when odd (the second of a pair may find caches the first warmed). So both sides send the
same requests, at the same rate, interleaved, under the same conditions. Locust user ``u`` of ``U`` owns the
slots ``j = u (mod U)``, with one keep-alive connection per side (a ``requests.Session``, an
``Elasticsearch`` client): ``U`` is chosen so that a user's next slot comes ``U * gap`` (>= 2 s) later. A
slot sent later than due (its user still waiting for its previous answer) is counted and its lateness
reported: late sends mean the rate was not sustained, and latency measured from the late send would hide it.
Neither side retries (``requests`` does not by default; the Elasticsearch client would retry a dropped
connection three times, silently, so it gets ``max_retries=0``): a failed call is a failure on both sides.

Why not ``constant_throughput``: locust's pacing counts from the user's spawn, so a random start inside
``on_start`` is absorbed by the first wait and the users, spawned within a second, fire in phase: every
period, one burst of all users' requests (Elasticsearch's search pool: 4 threads, queue up to 96 shard
tasks during the burst, idle the rest of the period), then nothing. That measured the burst's queue.

Environment: BENCH_KEY (API key), BENCH_API, BENCH_ES (URLs), BENCH_PLAN, BENCH_TIMINGS (output).
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gevent  # noqa: E402
import requests  # noqa: E402
from elasticsearch import Elasticsearch  # noqa: E402
from locust import User, events, task  # noqa: E402
from locust.exception import StopUser  # noqa: E402

from api_requests import ALIAS, api_answer, direct_answer, non_empty  # noqa: E402

PLAN = json.loads(Path(os.environ["BENCH_PLAN"]).read_text())
PAIRS: list[list] = PLAN["pairs"]
GAP: float = PLAN["gap"]
USERS: int = PLAN["users"]
TIMES: dict[str, list[float]] = defaultdict(list)
LATE: list[float] = []  # ms after its due time each slot was sent
FAILURES: Counter = Counter()
ERRORS: list[str] = []
_ids = itertools.count()
_T0: list[float] = []
_done: list[int] = []


@events.quitting.add_listener
def _dump(**_: object) -> None:
    Path(os.environ["BENCH_TIMINGS"]).write_text(json.dumps(
        {"times": TIMES, "failures": FAILURES, "errors": ERRORS, "late": LATE, "slots": 2 * len(PAIRS)}))


class Slots(User):
    def on_start(self) -> None:
        self.u = next(_ids)
        if not _T0:
            _T0.append(time.perf_counter() + 1.0)  # every user is spawned by then (-r: all in 0.2 s)
        self.session = requests.Session()
        self.session.headers["Authorization"] = "Bearer " + os.environ["BENCH_KEY"]
        self.base = os.environ["BENCH_API"]
        self.es = Elasticsearch(os.environ["BENCH_ES"], request_timeout=60, max_retries=0)

    def call(self, side: str, name: str, variant: int) -> list:
        path, params, body = PLAN["requests"][name][variant]
        if side == "api":
            resp = self.session.get(self.base + path, params=params, timeout=60)
            resp.raise_for_status()
            return api_answer(name, resp.json())
        return direct_answer(name, self.es.search(index=ALIAS, ignore_unavailable=True, **body).body)

    @task
    def slots(self) -> None:
        for j in range(self.u, 2 * len(PAIRS), USERS):
            due = _T0[0] + j * GAP
            gevent.sleep(max(0.0, due - time.perf_counter()))
            name, variant = PAIRS[j // 2]
            side = ("api", "direct")[(j + j // 2) % 2]  # pair p: the API first when p is even
            began = time.perf_counter()
            LATE.append((began - due) * 1000)
            try:
                answer = self.call(side, name, variant)
                if not non_empty(name, answer):
                    raise AssertionError(f"{side} {name}: empty answer")
                TIMES[f"{side} {name}"].append((time.perf_counter() - began) * 1000)
            except Exception as exc:  # noqa: BLE001 - counted as a failure
                FAILURES[f"{side} {name}"] += 1
                if len(ERRORS) < 10:
                    ERRORS.append(f"{side} {name}: {exc!r}"[:300])
        _done.append(self.u)
        if len(_done) == USERS:
            gevent.spawn(self.environment.runner.quit)
        raise StopUser()
