"""Secret detection on hostile input (issue 30, item 3): no pattern ever reads more than a bounded text, lengths
are checked before any pattern, and no pattern can backtrack. Costs per KB: ``bench/patterns.py``."""

from __future__ import annotations

import re
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

import pytest

from crawl_assets.registry import load_registry
from crawl_assets.registry import models as detector
from crawl_assets.registry.models import SourceStatus
from crawl_assets_tests.fakes import (FAKE_API_HASH, FAKE_AWS_KEY_ID, FAKE_GITLAB_TOKEN, FAKE_HEX64_KEY,
                                      FAKE_INTERCOM_TOKEN, FAKE_JWT, FAKE_URL_API_KEY, FAKE_X_BEARER_LONG)

BOUND = 4096  # the most characters a pattern may read
PATTERNS = dict(detector._PATTERNS)


class Recording:
    """A compiled pattern that remembers the longest text it was given."""

    longest = 0

    def __init__(self, pattern: re.Pattern[str]):
        self.pattern = pattern

    def _seen(self, text: str) -> None:
        Recording.longest = max(Recording.longest, len(text))

    def search(self, text: str, *args):
        self._seen(text)
        return self.pattern.search(text, *args)

    def sub(self, repl, text: str, *args):
        self._seen(text)
        return self.pattern.sub(repl, text, *args)


@pytest.fixture
def recorded(monkeypatch):
    Recording.longest = 0
    monkeypatch.setattr(detector, "_PATTERNS", [(name, Recording(p)) for name, p in detector._PATTERNS])
    monkeypatch.setattr(detector, "_ANY", Recording(detector._ANY))
    return Recording


def test_no_pattern_reads_more_than_the_bound_whatever_the_input(tmp_path, recorded):
    detail = "bad request: " + "a" * 60_000 + f" key {FAKE_HEX64_KEY}"  # a 60 KB X `detail` took 19 s per call
    redacted = detector.redact_secrets(detail)
    assert len(redacted) <= 500 and FAKE_HEX64_KEY not in redacted
    assert recorded.longest <= BOUND
    cut_secret = "reason " + "b" * (BOUND - 20) + " " + FAKE_X_BEARER_LONG  # a token cut by the bound is dropped
    assert FAKE_X_BEARER_LONG[:12] not in detector.redact_secrets(cut_secret, limit=BOUND)
    assert detector.looks_like_secret("q" * 40_000)  # refused as too long, never searched
    assert recorded.longest <= BOUND
    path = tmp_path / "sources.yaml"  # a 40 KB identifier took 35 s in every reader
    path.write_text("sources:\n  - {name: big, platform: x, kind: search_query, identifier: " + "a" * 40_000 + "}\n"
                    "  - {name: ok, platform: x, kind: search_query, identifier: q}\n")
    reg = load_registry(path)
    assert [e.name for e in reg.entries] == ["ok"]
    assert reg.errors[0].field == "identifier" and "longer than 2000 characters" in reg.errors[0].message
    assert recorded.longest <= BOUND
    paused = reg.set_status("ok", SourceStatus.paused, detail)  # an automatic pause quoting a server's error
    assert FAKE_HEX64_KEY not in (paused.status_reason or "") and recorded.longest <= BOUND


def _unbounded_backtracking(tree) -> list[str]:
    """Repeats that may give back what they took without a bound (greedy or lazy, max unbounded, or over 64)."""
    found = []
    for op, av in tree:
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            low, high, sub = av
            if high is sre.MAXREPEAT or high > 64:
                found.append(f"{op} {{{low},{'' if high is sre.MAXREPEAT else high}}}")
            found += _unbounded_backtracking(sub)
        elif op is sre.POSSESSIVE_REPEAT:
            found += _unbounded_backtracking(av[2])
        elif op in (sre.SUBPATTERN, sre.ATOMIC_GROUP, sre.ASSERT, sre.ASSERT_NOT):
            found += _unbounded_backtracking(av[-1])
        elif op is sre.BRANCH:
            for branch in av[1]:
                found += _unbounded_backtracking(branch)
    return found


@pytest.mark.parametrize("name", [*PATTERNS, "all in one"])
def test_no_pattern_can_give_back_an_unbounded_repeat(name):
    pattern = PATTERNS.get(name) or detector._ANY
    assert _unbounded_backtracking(sre_parse.parse(pattern.pattern)) == []


def _fill(unit: str, tail: str = "") -> str:
    """``unit`` repeated up to the bound, then ``tail``: at most BOUND characters."""
    return (unit * (BOUND // len(unit) + 1))[: BOUND - len(tail)] + tail


# Per pattern: shapes that made the earlier forms try long runs from many starts, each at the bound and holding no
# secret, and the same shape with the secret the pattern is for at its end.
ADVERSARIAL = {
    "private key block": (["-----BEGIN " + "A " * 2000, "-----BEGIN " * 372], "-----BEGIN RSA PRIVATE KEY-----"),
    "X/Twitter bearer token": ([_fill("A" * 40 + "!")], " " + FAKE_X_BEARER_LONG),
    "bearer authorization header": (["bearer" + " " * 4000 + "x" * 15, _fill("bearer ")], " Bearer " + "k" * 20),
    "Telegram api_hash": ([_fill("a"), _fill("0123456789abcdef" * 2 + "0")], " " + FAKE_API_HASH),
    "Telethon StringSession": ([_fill("=1" * 99 + " ")], " 1" + "Ab_-" * 60),
    "Intercom access token": ([_fill("dG9rO" + "A" * 19 + " ")], " " + FAKE_INTERCOM_TOKEN),
    "Google service-account JSON": (['"private_key_id"' + " " * 4000 + "x"], ' "private_key_id": "x"'),
    "Google API key": ([_fill("AIza" + "a" * 34 + " ")], " AIza" + "b" * 35),
    "Elasticsearch API key": (["ApiKey" + " " * 4000 + "x" * 19], " ApiKey " + "c" * 24),
    "password in URL": ([_fill("a"), "a://" + "b" * 4000, "a://b:" + "c" * 4000, _fill("a://b:c/")],
                        " https://user:pw@example.org"),
    "GitHub/Slack style token": ([_fill("ghp_" + "a" * 19 + " ")], " ghp_" + "d" * 36),
    "GitHub fine-grained token": ([_fill("github_pat_" + "a" * 21 + " ")], " github_pat_" + "e" * 30),
    "GitLab token": ([_fill("glpat-" + "a" * 19 + " ")], " " + FAKE_GITLAB_TOKEN),
    "AWS access key id": ([_fill("AKIA" + "A" * 15 + " ")], " " + FAKE_AWS_KEY_ID),
    "64-hex API key": ([_fill("a"), _fill("f" * 63 + " ")], " " + FAKE_HEX64_KEY),
    "API key in a URL": ([_fill("?key=" + "x" * 5 + " "), _fill("?")], " " + FAKE_URL_API_KEY),
    "JSON Web Token": (["eyJ" + "a" * 4000 + ".x", _fill("eyJaaaaa.eyJaaaa ")], " " + FAKE_JWT),
    "Slack app / Stripe live key": ([_fill("sk_live_" + "a" * 19 + " ")], " sk_live_" + "f" * 24),
}


@pytest.mark.parametrize("name", list(PATTERNS))
def test_each_pattern_answers_right_on_its_adversarial_shapes_at_the_bound(name):
    shapes, secret = ADVERSARIAL[name]
    pattern = PATTERNS[name]
    for shape in shapes:
        assert len(shape) <= BOUND
        assert pattern.search(shape) is None, (name, shape[:40])
        with_secret = shape[: BOUND - len(secret)] + secret
        assert pattern.search(with_secret) is not None, (name, secret)
        assert detector.looks_like_secret(with_secret)
