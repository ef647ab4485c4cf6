"""The pure scheduling policy: due-ness, priority, back-off, paused, in flight, export probes, batching."""

from __future__ import annotations

from hypothesis import given, settings as hsettings, strategies as st

from crawl_assets.registry import SourceEntry, SourceStatus
from crawl_assets.scheduling.policy import SourceHealth, backoff_seconds, due_at, plan_tick, window_slice
from crawl_assets.settings import SchedulerSettings

NOW = 1_800_000_000.0


def entry(name: str, *, priority: int = 0, interval: int = 60, credential: str | None = None,
          kind: str = "account_timeline", paused: bool = False) -> SourceEntry:
    return SourceEntry(name=name, tenant="t", platform="x", kind=kind, identifier=f"{name}.js" if kind == "export_file" else name,
                       policy={"interval_minutes": interval, "priority": priority}, credential=credential,
                       status=SourceStatus.paused if paused else SourceStatus.active)


def test_never_synced_is_due_and_interval_is_respected():
    e = entry("a", interval=30)
    assert due_at(e, SourceHealth(), SchedulerSettings()) == 0
    assert due_at(e, SourceHealth(last_success=NOW), SchedulerSettings()) == NOW + 1800


def test_backoff_doubles_and_is_capped():
    s = SchedulerSettings(backoff_base_seconds=60, backoff_cap_seconds=600)
    assert [backoff_seconds(n, s) for n in range(6)] == [0, 60, 120, 240, 480, 600]
    failing = SourceHealth(last_success=NOW - 7200, last_failure=NOW - 100, failures=2)
    assert due_at(entry("a"), failing, s) == NOW - 100 + 120


def test_server_wait_is_honoured():
    h = SourceHealth(last_success=NOW - 7200, retry_after=NOW + 500)
    plan = plan_tick([entry("a")], {"t.x.a": h}, set(), now=NOW, free_slots=4)
    assert plan.sources == [] and plan.skipped["backing off"] == 1


def test_paused_and_in_flight_are_never_requested():
    entries = [entry("a", paused=True), entry("b"), entry("c")]
    plan = plan_tick(entries, {}, {"t.x.b"}, now=NOW, free_slots=4)
    assert plan.sources == ["t.x.c"]
    assert plan.skipped["paused"] == 1 and plan.skipped["in flight"] == 1


def test_priority_then_overdue_order_and_batches():
    entries = [entry(f"s{i:02d}", priority=(5 if i == 7 else 0)) for i in range(25)]
    health = {f"t.x.s{i:02d}": SourceHealth(last_success=NOW - 3600 - i * 10) for i in range(25)}
    plan = plan_tick(entries, health, set(), now=NOW, free_slots=2, settings=SchedulerSettings(min_batch=10))
    flat = plan.sources
    assert flat[0] == "t.x.s07"  # priority first
    assert flat[1] == "t.x.s24"  # then the most overdue
    assert len(plan.batches) == 2 and sorted(flat) == sorted(health)
    assert plan.singles == []


def test_failing_sources_are_retried_alone_and_do_not_starve_batches():
    entries = [entry(f"f{i}") for i in range(5)] + [entry(f"h{i}") for i in range(30)]
    health = {f"t.x.f{i}": SourceHealth(last_success=NOW - 9999, last_failure=NOW - 9999, failures=1) for i in range(5)}
    plan = plan_tick(entries, health, set(), now=NOW, free_slots=4, settings=SchedulerSettings(single_share=0.5))
    assert len(plan.singles) == 2 and all(k.startswith("t.x.f") for k in plan.singles)
    assert len(plan.batches) == 2 and all(k.startswith("t.x.h") for b in plan.batches for k in b)
    assert plan.skipped["failing, waiting for a slot"] == 3


def test_no_free_slot_requests_nothing():
    plan = plan_tick([entry("a")], {}, set(), now=NOW, free_slots=0)
    assert plan.sources == [] and plan.skipped["no free run slot"] == 1


def test_batches_hold_one_credential_and_respect_its_run_limit():
    entries = [entry(f"a{i}", credential="alice") for i in range(4)] + [entry(f"b{i}", credential="bob") for i in range(4)]
    plan = plan_tick(entries, {}, set(), now=NOW, free_slots=4, settings=SchedulerSettings(min_batch=1),
                     credential_runs={"alice": 1}, max_runs_per_credential=1)
    creds = [{k[4] for k in b} for b in plan.batches]
    assert creds == [{"b"}], "alice already has a run in flight; bob gets one run with all its sources"
    assert plan.skipped["no free run slot"] == 4


def test_unchanged_export_file_costs_no_run():
    e = entry("dump", kind="export_file", interval=1)
    h = SourceHealth(last_success=NOW - 3600, probe="10:123")
    assert plan_tick([e], {e.key: h}, set(), now=NOW, free_slots=1, probe=lambda _: "10:123").sources == []
    assert plan_tick([e], {e.key: h}, set(), now=NOW, free_slots=1, probe=lambda _: "11:456").sources == [e.key]
    budget = SchedulerSettings(probe_budget=0)
    assert plan_tick([e], {e.key: h}, set(), now=NOW, free_slots=1, settings=budget, probe=lambda _: "x").sources == []


def test_health_round_trips_and_tolerates_garbage():
    h = SourceHealth(last_success=NOW, failures=0, last_error="", probe="1:2").failed(NOW + 1, "boom", retry_after=NOW + 60)
    assert SourceHealth.from_json(h.to_json()) == h
    assert SourceHealth.from_json("not json") == SourceHealth() and SourceHealth.from_json('{"unknown": 1}') == SourceHealth()
    assert h.succeeded(NOW + 2).failures == 0


@hsettings(max_examples=60, deadline=None)
@given(n=st.integers(0, 50), pos=st.integers(0, 200), window=st.integers(1, 60))
def test_window_slices_cover_everything_in_rounds(n, pos, window):
    keys = list(range(n))
    seen: list[int] = []
    p = pos
    for _ in range(-(-n // window) if n else 1):
        chunk, p = window_slice(keys, p, window)
        seen += chunk
    assert set(seen) == set(keys)


@hsettings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 3), st.booleans(), st.booleans()), max_size=40),
       st.integers(0, 6))
def test_plan_never_requests_a_source_twice_or_an_ineligible_one(specs, slots):
    entries = [entry(f"s{i}", priority=p, paused=paused) for i, (p, _, paused, _) in enumerate(specs)]
    health = {e.key: SourceHealth(last_success=NOW - 7200, last_failure=NOW - 7200 if f else None, failures=f)
              for e, (_, f, _, _) in zip(entries, specs)}
    flying = {e.key for e, (*_, fly) in zip(entries, specs) if fly}
    plan = plan_tick(entries, health, flying, now=NOW, free_slots=slots, settings=SchedulerSettings(min_batch=3, max_batch=5))
    got = plan.sources
    assert len(got) == len(set(got))
    assert not set(got) & flying
    assert not {e.key for e in entries if e.paused} & set(got)
    assert len(plan.singles) + len(plan.batches) <= slots
    assert all(len(b) <= 5 for b in plan.batches)


def test_fast_registry_view_reads_like_the_round_trip_loader(tmp_path, isolated_env):
    from crawl_assets.registry import load_registry
    from crawl_assets.registry.store import registry_view

    path = tmp_path / "sources.yaml"
    # export files: their options (beyond format) are not a typed model, so every scalar reaches the entry as parsed
    entry_yaml = """  - name: {name}
    platform: x
    kind: export_file
    identifier: {ident}
    policy: {{interval_minutes: 15, priority: -2}}
    options: {{max_results: 50, flag: {flag}, note: null, ratio: 1.5}}
"""
    for ident, flag in (("on", "yes"), ("true_name", "true"), ("0123", "no"), ("u", "0x1f"), ("v", "1_000")):
        path.write_text("sources:\n" + entry_yaml.format(name="a", ident=ident, flag=flag)
                        + entry_yaml.format(name="b", ident="plain", flag="off"))
        fast, by_key = registry_view(path)
        slow = load_registry(path)
        assert "b" in {e.name for e in slow.entries}, (ident, flag)  # options as parsed, not refused
        assert [e.model_dump() for e in fast.entries] == [e.model_dump() for e in slow.entries], (ident, flag)
        assert [str(e) for e in fast.errors] == [str(e) for e in slow.errors]
        assert set(by_key) == {e.key for e in slow.entries}
