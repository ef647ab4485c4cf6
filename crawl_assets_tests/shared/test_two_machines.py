"""Two machines in one test (issue 19): two run workers, each in its own process and empty working folder,
sharing only the instance's Postgres database, the S3 server (lake and registry) and the Elasticsearch node,
sync the same N Hacker News sources at once, as two pods of one scheduler tick would; one of them is
SIGKILLed mid-run (after a quarter of the sources). N is 20 here (``CRAWL_TWO_MACHINES_N``); the
full-size run with its figures is ``bench/two_machines.py`` (200 sources).

- no source is synced by both at once (each worker has its own stand-in: their request times per query never
  overlap), both did work, and no source but the one the killed worker was in is fetched by both;
- nothing else is fetched twice: every item is served once, but the killed source's;
- the surviving worker finishes its run, and a re-run of what the instance shows unfinished (what the scheduler
  would request next) leaves the lake and the index equal, by content, to a one-worker run's (made first, on a
  local-disk lake: the lake's content does not depend on where it is stored);
- the workers' folders hold nothing of ours but the instance config they were given.
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from crawl_assets_tests.conftest import new_database
from crawl_assets_tests.shared import pods
from crawl_assets_tests.shared.pods import CountingHN, Deployment, Worker

# Enough for every property (B killed after N/4 = 5 sources, so A takes the other >= 14 and finishes them; >= 10
# is asserted), small enough for CI.
N = int(os.environ.get("CRAWL_TWO_MACHINES_N", "20"))


def _prepare(deployment: Deployment, monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry in S3 and the sources' partitions in the instance (the registry sensor's work)."""
    import dagster as dg

    from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS

    pods.register(deployment.registry, N)
    monkeypatch.setenv("DAGSTER_PG_URL", deployment.pg_url)
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions(SOURCE_PARTITIONS[pods.PLATFORM].name, pods.keys_of(N))


def _unfinished(deployment: Deployment, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources the instance shows never synced, or synced with raw data still to derive."""
    import dagster as dg

    from crawl_assets.orchestration.monitoring.health import load_health

    monkeypatch.setenv("DAGSTER_PG_URL", deployment.pg_url)
    with dg.DagsterInstance.get() as instance:
        health = load_health(instance, pods.keys_of(N))
    return [k for k, h in health.items() if not h.last_success or h.pending]


def _snapshot(deployment: Deployment, es) -> tuple[dict, dict]:
    return pods.lake_snapshot(deployment.lake, N), pods.index_snapshot(es.client)


def _record(figures: dict) -> None:
    """The phases' figures for ``bench/two_machines.py`` (``CRAWL_BENCH_FIGURES``: a JSON file to write)."""
    if os.environ.get("CRAWL_BENCH_FIGURES"):
        with open(os.environ["CRAWL_BENCH_FIGURES"], "w") as fh:
            json.dump(figures, fh)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_two_workers_share_n_sources_and_converge_after_a_kill(tmp_path, dagster_home, pg_url, s3_env, es_cluster,
                                                                monkeypatch):
    items = pods.source_items(N)
    keys = pods.keys_of(N)
    queries = {f"pod{i:03d}x" for i in range(N)}

    figures: dict = {"sources": N, "items": len(items)}

    # -- the one-worker run: what the two must equal --------------------------------------------------------
    solo = Deployment(pg_url, s3_env.env, es_cluster.env(), lake=str(tmp_path / "reference-lake"))
    _prepare(solo, monkeypatch)
    with CountingHN(items=items) as server:
        worker = Worker(tmp_path / "solo", solo, server.url, keys)
        pods.run_together([worker])
        started = time.monotonic()
        assert "finished True" in worker.finish(), worker.tail()
        figures["solo_seconds"] = time.monotonic() - started
    assert server.ids() == {i["objectID"]: 1 for i in items}
    reference = _snapshot(solo, es_cluster)
    assert sum(len(s["normalized_records"]) for s in reference[0].values()) == len(items)
    assert len(reference[1]) >= len(items)
    es_cluster.wipe()

    # -- two workers, the same 200 sources in the same order, started together; B killed mid-run ------------
    with new_database(os.environ["CRAWL_TEST_PG_URL"]) as pair_db:
        pair = Deployment(pair_db, s3_env.env, es_cluster.env())
        _prepare(pair, monkeypatch)
        with CountingHN(items=items) as one, CountingHN(items=items) as two, CountingHN(items=items) as three:
            a = Worker(tmp_path / "machine-a", pair, one.url, keys)
            b = Worker(tmp_path / "machine-b", pair, two.url, keys)
            pods.run_together([a, b])
            started = time.monotonic()
            deadline = time.monotonic() + 1200
            while len(two.queries()) < N // 4 and b.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert b.proc.poll() is None, f"B ended before it was killed: {b.tail()}"
            b.proc.send_signal(signal.SIGKILL)
            b.proc.wait()
            figures["killed_after_seconds"] = time.monotonic() - started
            assert "finished True" in a.finish(), a.tail()  # the survivor finishes its own work
            figures["pair_seconds"] = time.monotonic() - started
            figures["a_sources"], figures["b_sources"] = len(one.queries()), len(two.queries())
            left = _unfinished(pair, monkeypatch)
            assert len(left) <= 1, left  # what B held when it died, if A had passed it by then
            workers = [a, b]
            if left:
                c = Worker(tmp_path / "machine-c", pair, three.url, left)
                pods.run_together([c])
                assert "finished True" in c.finish(), c.tail()
                workers.append(c)
            assert _unfinished(pair, monkeypatch) == []
        assert one.queries() | two.queries() | three.queries() == queries
        assert len(one.queries()) >= 10 and len(two.queries()) >= N // 4, "both workers must have synced sources"
        survivors = one.queries() | three.queries()
        for q in two.queries() & survivors:  # the killed worker's last source, taken over after its death
            assert two.span(q)[1] < min((s.span(q)[0] for s in (one, three) if q in s.queries())), q
        assert len(two.queries() & survivors) <= 1, sorted(two.queries() & survivors)
        assert not one.queries() & three.queries()
        served = one.ids() + two.ids() + three.ids()
        assert set(served) == {i["objectID"] for i in items}
        killed = {i["objectID"] for i in items
                  if any(q in (i.get("title") or i.get("comment_text") or "") for q in two.queries() & survivors)}
        assert {i for i, n in served.items() if n > 1} <= killed, "only the killed worker's last source is fetched again"
        assert _snapshot(pair, es_cluster) == reference
        for w in workers:
            assert w.files() == ["dagster.yaml"], w.files()  # no data or state of ours on a "machine"
        figures["rerun_sources"] = len(three.queries())
    _record(figures)
