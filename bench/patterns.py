"""Bench: the secret-detection patterns (``crawl_assets/registry/models.py``) on hostile shapes, beside the same
patterns as they were before issue 30 (item 3), the named peer.

For each pattern and each adversarial shape of ``crawl_assets_tests/attacks/test_secret_patterns.py`` (no secret
in it, built to make a backtracking pattern try long runs from many starts), the CPU time of ``search`` is printed
as microseconds per KB of input at 1, 4 and 16 KB: a pattern linear in its input keeps the same cost per KB as the
input grows; a quadratic one's cost per KB grows with the input (x4 from 4 to 16 KB). Only the first 4 KB
(``SCAN_LIMIT``) of a text ever reaches a pattern now; the larger sizes show what each pattern would do beyond.
Then the two calls the issue timed, end to end: a 60 KB error ``detail`` redacted, and a registry entry with a
40 KB identifier checked (the earlier code is timed on 4 KB of each: it needed 19 s and 35 s on the full size).

    python bench/patterns.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from crawl_assets.registry import models as secrets  # noqa: E402
from crawl_assets.registry.models import find_secret  # noqa: E402
from crawl_assets_tests.attacks.test_secret_patterns import ADVERSARIAL  # noqa: E402

# The patterns before issue 30: greedy repeats, the URL scheme tried from every letter of a word.
BEFORE = {
    "private key block": r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
    "X/Twitter bearer token": r"AAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{20,}",
    "bearer authorization header": r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}",
    "Telegram api_hash": r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])",
    "Telethon StringSession": r"(?<![A-Za-z0-9_-])1[A-Za-z0-9_=-]{200,}",
    "Intercom access token": r"\bdG9rO[A-Za-z0-9+/=]{20,}",
    "Google service-account JSON": r'"private_key_id"\s*:',
    "Google API key": r"\bAIza[0-9A-Za-z_-]{35}\b",
    "Elasticsearch API key": r"(?i)\bApiKey\s+[A-Za-z0-9+/=]{20,}",
    "password in URL": r"[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@",
    "GitHub/Slack style token": r"\b(?:ghp|gho|ghu|ghs|ghr|xox[abpr])_?[A-Za-z0-9-]{20,}",
    "GitHub fine-grained token": r"\bgithub_pat_[A-Za-z0-9_]{22,}",
    "GitLab token": r"\bgl(?:pat|dt|rt|ptt|oas)-[A-Za-z0-9_-]{20,}",
    "AWS access key id": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    "64-hex API key": r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{64}(?![0-9A-Fa-f])",
    "API key in a URL": r"(?i)[?&#;](?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|secret|"
                        r"client[_-]?secret|password|passwd|pwd|sig|signature|key)=[^&#\s]{6,}",
    "JSON Web Token": r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
    "Slack app / Stripe live key": r"\b(?:xapp-|sk_live_|rk_live_)[A-Za-z0-9_-]{20,}",
}
SIZES_KB = (1, 4, 16)


def _scaled(shape: str, size: int) -> str:
    """``shape`` (built at 4 KB) grown or cut to ``size`` characters, keeping its period."""
    return (shape * (size // len(shape) + 1))[:size]


def _cpu(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    now = dict(secrets._PATTERNS)
    head = "".join(f"{f'{kb} KB now':>11}{f'{kb} KB before':>14}" for kb in SIZES_KB)
    print(f"µs of CPU per KB of input for one search (best of {args.repeat}); SCAN_LIMIT = {secrets.SCAN_LIMIT} characters")
    print(f"{'pattern':<30}{'shape':<22}{head}")
    worst_growth: dict[str, float] = {}
    for name, (shapes, _) in ADVERSARIAL.items():
        before = re.compile(BEFORE[name])
        for shape in shapes:
            row, costs = [], {}
            for kb in SIZES_KB:
                text = _scaled(shape, kb * 1024)
                for label, pattern in (("now", now[name]), ("before", before)):
                    # the earlier URL pattern at 16 KB takes seconds per call: once is enough
                    reps = 1 if label == "before" and kb >= 16 else args.repeat
                    cost = _cpu(lambda: pattern.search(text), reps) / kb * 1e6
                    costs[label, kb] = cost
                    row.append(f"{cost:>11.1f}" if label == "now" else f"{cost:>14.1f}")
            for label in ("now", "before"):
                growth = costs[label, 16] / max(costs[label, 4], 1e-3)
                worst_growth[label] = max(worst_growth.get(label, 0.0), growth if costs[label, 16] > 5 else 1.0)
            print(f"{name[:29]:<30}{repr(shape[:16])[:21]:<22}{''.join(row)}")
    print(f"largest growth of the cost per KB from 4 to 16 KB (over 5 µs/KB): now {worst_growth['now']:.1f}x, "
          f"before {worst_growth['before']:.1f}x (x1: linear; x4: quadratic)")

    entry = {"name": "big", "platform": "x", "kind": "search_query", "identifier": "a" * 40_000}
    old_patterns = [re.compile(p) for p in BEFORE.values()]
    for label, detail in (("one 60 KB word", "bad request: " + "a" * 60_000),
                          ("60 KB of 200-letter words", "bad request: " + ("a" * 200 + " ") * 300)):
        redact = _cpu(lambda: secrets.redact_secrets(detail), args.repeat)
        old_redact = _cpu(lambda: [p.sub("[redacted]", detail[:4096]) for p in old_patterns], 1)
        print(f"redact a 60 KB error detail ({label}): now {redact * 1e3:.2f} ms (4 KB read, less the word cut there); "
              f"before, on its first 4 KB only: {old_redact * 1e3:.1f} ms (the full 60 KB word took 19 s)")
    check = _cpu(lambda: find_secret(entry), args.repeat)
    old_check = _cpu(lambda: [p.search(entry["identifier"][:4096]) for p in old_patterns], 1)
    print(f"check an entry with a 40 KB identifier: now {check * 1e3:.3f} ms (refused as too long before any pattern); "
          f"before, on its first 4 KB only: {old_check * 1e3:.1f} ms (the full 40 KB took 35 s)")


if __name__ == "__main__":
    main()
