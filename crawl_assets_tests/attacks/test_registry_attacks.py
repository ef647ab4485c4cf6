"""Attacks through the registry file and its editors (issue 15, items 3, 4 and 6): names that only look
valid, alias bombs, repeated keys that one reader honours and another refuses, a cache that could run
code, pause reasons that carry tokens, and secret shapes the detector missed."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from crawl_assets.core import names
from crawl_assets.registry import RegistryFileError, SourceEntry, load_registry
from crawl_assets.registry import models as detector
from crawl_assets.registry import store as registry_store
from crawl_assets.registry.store import registry_view
from crawl_assets.orchestration.raw_step import pause_source
from crawl_assets_tests.fakes import (FAKE_AWS_KEY_ID, FAKE_GITLAB_TOKEN, FAKE_HEX64_KEY, FAKE_JWT, FAKE_JWT_SHORT,
                                      FAKE_URL_API_KEY, FAKE_X_BEARER)

ENTRY = "  - {{name: {name}, tenant: {tenant}, platform: x, kind: search_query, identifier: q}}\n"


def _cli(*args: str, registry: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", "sources", *args, "--registry", str(registry)],
                          capture_output=True, text=True, timeout=120)


def _fresh_view(path: Path):
    registry_store._cache.clear()  # a new process: nothing in memory
    return registry_view(path)


@pytest.mark.parametrize("field", ["tenant", "name"])
def test_a_name_with_a_trailing_newline_is_not_a_name(field):
    data = {"name": "news", "tenant": "acme", "platform": "x", "kind": "search_query", "identifier": "q"}
    with pytest.raises(ValueError):
        SourceEntry.model_validate({**data, field: data[field] + "\n"})
    with pytest.raises(ValueError):
        SourceEntry.model_validate({**data, "credential": "main\n"})
    with pytest.raises(ValueError):
        names.check_tenant("acme\n")


def test_tenants_that_would_share_a_credential_variable_are_refused_by_every_reader(tmp_path):
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n" + ENTRY.format(name="a", tenant="a-b") + ENTRY.format(name="b", tenant="a_b")
                    + ENTRY.format(name="c", tenant="other"))
    for reg in (load_registry(path), _fresh_view(path)[0]):
        assert [e.key for e in reg.entries] == ["other.x.c"]
        assert {(e.index, e.field) for e in reg.errors} == {(0, "tenant"), (1, "tenant")}
        assert "A_B" in reg.errors[0].message
    for bad in ("a__b", "a-_b", "a-", "a_"):  # '__' separates tenant and credential in variable names
        with pytest.raises(ValueError):
            SourceEntry(name="n", tenant=bad, platform="x", kind="search_query", identifier="q")
    path.write_text("sources:\n" + ENTRY.format(name="a", tenant="a-b"))
    added = _cli("add", "--platform", "x", "--kind", "search_query", "--identifier", "q", "--name", "z",
                 "--tenant", "a_b", registry=path)
    assert added.returncode == 2 and "share the credential variables" in added.stderr


def _alias_bomb(depth: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1},"
              f" *a{i - 1}, *a{i - 1}]" for i in range(1, depth)]
    return "\n".join(lines) + f"\nsources:\n  - {{name: b, platform: x, kind: search_query, identifier: q, options: {{bomb: *a{depth - 1}}}}}\n"


def test_a_yaml_alias_bomb_is_refused_before_anything_expands(tmp_path):
    path = tmp_path / "sources.yaml"
    path.write_text(_alias_bomb(4))  # 10**4 leaves here; 9 levels (430 bytes) took 16 s and 213 MB before
    with pytest.raises(RegistryFileError, match="aliases"):
        load_registry(path)
    with pytest.raises(RegistryFileError, match="aliases"):
        _fresh_view(path)
    listed = _cli("list", registry=path)
    assert listed.returncode == 2 and "aliases" in listed.stderr


# Anchor names libyaml refuses but ruamel reads (issue 30, item 1): the guard's libyaml scan failed on them and
# trusted "the parser will report it"; ruamel then expanded 10**9 leaves (84 s, 958 MiB for 565 bytes).
ANCHOR_NAMES = {"dotted": "a.{}", "slashed": "a/{}", "persian": "\u0628{}", "plain": "a{}"}


def named_alias_bomb(shape: str, depth: int = 9) -> str:
    name = ANCHOR_NAMES[shape].format
    lines = [f"l0: &{name(0)} [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &{name(i)} [" + ", ".join([f"*{name(i - 1)}"] * 10) + "]" for i in range(1, depth)]
    return "\n".join(lines) + f"\nsources:\n  - {{name: b, platform: x, kind: search_query, identifier: q, " \
                               f"options: {{bomb: *{name(depth - 1)}}}}}\n"


@pytest.fixture
def no_alias_is_ever_composed(monkeypatch):
    """ruamel's composer fails the test the moment it would build an alias (it used to, then expanded it)."""
    from ruamel.yaml.composer import Composer

    def composed(self, node):
        raise AssertionError("an alias was composed")

    monkeypatch.setattr(Composer, "return_alias", composed)


@pytest.mark.parametrize("shape", list(ANCHOR_NAMES))
def test_an_alias_bomb_is_refused_by_every_reader_whatever_its_anchor_names(tmp_path, shape, no_alias_is_ever_composed):
    import tracemalloc

    from crawl_assets.retention.policy import load_policy

    path = tmp_path / "sources.yaml"
    path.write_text(named_alias_bomb(shape), encoding="utf-8")
    tracemalloc.start()
    try:
        with pytest.raises(RegistryFileError, match=r"sources.yaml:\d+: YAML anchors and aliases"):
            load_registry(path)  # the CLI, definitions load, the lake resource
        with pytest.raises(RegistryFileError, match=r"sources.yaml:\d+: YAML anchors and aliases"):
            _fresh_view(path)  # sensors, runs, the webhook receiver
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"{peak} bytes held while refusing {path.stat().st_size} bytes"
    policy = tmp_path / "retention.yaml"
    policy.write_text(named_alias_bomb(shape).replace("sources:", "tenants:"), encoding="utf-8")
    with pytest.raises(ValueError, match="anchors and aliases"):
        load_policy(policy)


def test_a_key_repeated_inside_an_entry_is_refused_by_every_reader(tmp_path):
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n  - name: news\n    tenant: acme\n    platform: x\n    kind: search_query\n"
                    "    identifier: q\n    tenant: globex\n")
    with pytest.raises(RegistryFileError):
        load_registry(path)
    with pytest.raises(RegistryFileError):  # the sensors' and runs' fast path ran tenant globex before
        _fresh_view(path)


def test_the_registry_cache_is_data_that_cannot_run_code_and_is_validated_again(tmp_path, isolated_env):
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n" + ENTRY.format(name="news", tenant="acme"))
    digest = __import__("hashlib").sha1(str(path.resolve()).encode()).hexdigest()[:16]
    cache = isolated_env / "cache"
    cache.mkdir()
    proof = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {proof}",))

    st = path.stat()
    (cache / f"registry-{digest}.pickle").write_bytes(pickle.dumps(((st.st_size, st.st_mtime_ns), Payload())))
    reg, _ = _fresh_view(path)
    assert not proof.exists(), "a cache file was unpickled"
    assert [e.key for e in reg.entries] == ["acme.x.news"]
    [snapshot] = cache.glob("registry-*.json")
    data = orjson.loads(snapshot.read_bytes())
    data["entries"][0]["tenant"] = "globex\n"  # a tampered cache is validated like the file
    snapshot.write_bytes(orjson.dumps(data))
    assert [e.key for e in _fresh_view(path)[0].entries] == ["acme.x.news"]


def test_a_pause_reason_never_stores_a_secret_nor_breaks_the_registry(tmp_path):
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n" + ENTRY.format(name="news", tenant="acme") + ENTRY.format(name="other", tenant="acme"))
    token = FAKE_X_BEARER
    assert _cli("pause", "acme.x.news", "--reason", f"owner said stop; token was {token}\nline two", registry=path).returncode == 0
    # an automatic pause quoting a server's error text
    pause_source(path, "acme.x.other", f"HTTP 401 Unauthorized: invalid key {FAKE_HEX64_KEY} for {FAKE_URL_API_KEY}")
    text = path.read_text()
    assert token not in text and FAKE_HEX64_KEY not in text and "3f9c2a71b8e4d605" not in text
    for command in (("list",), ("show", "acme.x.news"), ("resume", "acme.x.news"), ("remove", "acme.x.other")):
        result = _cli(*command, registry=path)
        assert result.returncode == 0, (command, result.stderr)
    # a reason edited in by hand is shown redacted, never refused
    path.write_text("sources:\n  - {name: news, tenant: acme, platform: x, kind: search_query, identifier: q, "
                    f"status: paused, status_reason: 'key {FAKE_GITLAB_TOKEN}'}}\n")
    [entry] = load_registry(path).entries
    assert entry.paused and FAKE_GITLAB_TOKEN not in (entry.status_reason or "")
    shown = _cli("show", "acme.x.news", registry=path)
    assert shown.returncode == 0 and FAKE_GITLAB_TOKEN not in shown.stdout


@pytest.mark.parametrize("secret", [FAKE_HEX64_KEY, FAKE_GITLAB_TOKEN, FAKE_AWS_KEY_ID, FAKE_URL_API_KEY, FAKE_JWT,
                                    FAKE_JWT_SHORT])
def test_the_secret_detector_knows_common_key_shapes(secret):
    assert detector.looks_like_secret(secret)
    assert detector.looks_like_secret(f"see {secret} here")
    assert secret not in detector.redact_secrets(f"error: {secret}.")
    with pytest.raises(ValueError, match="secret"):
        SourceEntry(name="n", platform="discourse", kind="forum", identifier=secret)
