"""A large registry (issue 30, item 15): every command reads it once, with libyaml's events; an edit re-reads and
rewrites only its own entry; a changed registry is validated only where it changed. Figures: ``bench/registry.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml.composer import Composer

from crawl_assets.registry import SourceEntry, SourceStatus, load_registry, update_registry
from crawl_assets.registry.models import SourceEntry as Model
from crawl_assets.registry.store import Registry, _parse_roundtrip, parse_registry
from crawl_assets.registry import store as registry_store

N = 300


def _entry(i: int) -> str:
    return (f"  - name: s{i:04d}   # source {i}\n    tenant: acme\n    platform: x\n    kind: account_timeline\n"
            f"    identifier: account_{i}\n    policy: {{interval_minutes: 60}}\n")


def _registry(tmp_path: Path, n: int = N) -> Path:
    path = tmp_path / "sources.yaml"
    path.write_text("# the team's sources\nsources:\n" + "".join(_entry(i) for i in range(n)) + "# end\n")
    return path


@pytest.fixture
def composed(monkeypatch) -> list[int]:
    """How many nodes ruamel's round-trip loader composed (it took 3.5 ms per entry)."""
    count = [0]
    compose = Composer.compose_node

    def counting(self, parent, index):
        count[0] += 1
        return compose(self, parent, index)

    monkeypatch.setattr(Composer, "compose_node", counting)
    return count


@pytest.fixture
def validated(monkeypatch) -> list[int]:
    """How many entries went through the pydantic model."""
    count = [0]
    validate = Model.model_validate.__func__

    def counting(cls, *args, **kwargs):
        count[0] += 1
        return validate(cls, *args, **kwargs)

    monkeypatch.setattr(Model, "model_validate", classmethod(counting))
    return count


def test_reading_never_uses_the_round_trip_loader(tmp_path, composed):
    reg = load_registry(_registry(tmp_path))  # `sources list`, `show`, `status`, the lake resource
    assert len(reg.entries) == N and reg.errors == []
    assert composed[0] == 0


def test_an_edit_reads_and_rewrites_only_its_own_entry(tmp_path, composed):
    path = _registry(tmp_path)
    before = path.read_text()
    update_registry(path, lambda reg: reg.set_status("s0150", SourceStatus.paused, "went private"))
    assert composed[0] < 30, "the round-trip loader read more than the one entry"
    after = path.read_text()
    old, new = _entry(150), _entry(150) + "    status: paused\n    status_reason: went private\n"
    assert after == before.replace(old, new), "every other byte stays as it was"
    composed[0] = 0
    update_registry(path, lambda reg: reg.remove("s0007"))
    update_registry(path, lambda reg: reg.add(SourceEntry(name="new", tenant="acme", platform="x",
                                                          kind="account_timeline", identifier="fresh")))
    assert composed[0] == 0
    final = load_registry(path)
    assert final.errors == [] and len(final.entries) == N
    assert final.get("s0150").status is SourceStatus.paused and final.get("new").identifier == "fresh"
    assert "s0007" not in final.by_key() and "# source 8\n" in path.read_text() and path.read_text().endswith("# end\n")


def test_a_changed_registry_is_validated_only_where_it_changed(tmp_path, validated):
    path = _registry(tmp_path)
    registry_store._cache.clear()
    reg, _ = registry_store.registry_view(path)
    assert len(reg.entries) == N
    validated[0] = 0
    path.write_text(path.read_text().replace("identifier: account_42\n", "identifier: account_42b\n"))
    reg, by_key = registry_store.registry_view(path)  # a sensor's next tick
    assert by_key["acme.x.s0042"].identifier == "account_42b" and len(reg.entries) == N
    assert validated[0] == 1


def test_both_loaders_report_the_same_errors_at_the_same_lines(tmp_path):
    text = ("sources:\n" + _entry(1) + "  - name: bad\n    platform: myspace\n    kind: channel\n    identifier: q\n"
            + _entry(2) + "  - name: s0001\n    tenant: acme\n    platform: x\n    kind: account_timeline\n"
            "    identifier: again\n    policy:\n      interval_minutes: 0\n  - just text\n")
    fast = parse_registry(Registry(path="p"), text.encode())
    slow = _parse_roundtrip(Registry(path="p"), text)
    assert [str(e) for e in fast.errors] == [str(e) for e in slow.errors]
    assert [e.line for e in fast.errors] == [9, 24, None]
    assert [e.key for e in fast.entries] == [e.key for e in slow.entries] == ["acme.x.s0001", "acme.x.s0002"]


@pytest.mark.parametrize("text", [
    "sources: [{name: a, platform: x, kind: search_query, identifier: q}, {name: b, platform: x, kind: search_query, identifier: r}]\n",
    "sources:\n  -\n    name: a\n    platform: x\n    kind: search_query\n    identifier: q\n  - name: b\n    platform: x\n"
    "    kind: search_query\n    identifier: r\n",
    "sources:\n  - name: a\n    platform: x\n    kind: search_query\n    identifier: 0o17\n  - {name: b, platform: x, kind: search_query, identifier: r}\n",
])
def test_edits_of_unusual_layouts_go_through_the_round_trip_loader(tmp_path, text):
    path = tmp_path / "sources.yaml"
    path.write_text(text)
    update_registry(path, lambda reg: reg.set_status("b", SourceStatus.paused, "why"))
    update_registry(path, lambda reg: reg.add(SourceEntry(name="c", platform="x", kind="search_query", identifier="s")))
    reg = load_registry(path)
    assert reg.get("b").paused and reg.get("b").status_reason == "why" and [e.name for e in reg.entries][-1] == "c"
