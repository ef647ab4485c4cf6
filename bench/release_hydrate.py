"""Bench: hydration of N X post ids (default 5,000; ``--ids 100000`` for issue 37's size) against the X API v2
stand-in with a rate limit on ``GET /2/tweets`` (``--limit`` requests per ``--window`` seconds: X counts requests
per 15-minute window; the window is scaled down so the run is short but the limit still binds). 2% of the ids were
deleted and one author in six protected since the list was made.

Side by side, each against a fresh stand-in with the same limit:

- ``crawl-assets id_list``: the X collector's hydration (``sources/x/hydrate.py``: 100 ids a request, raw batches
  in a lake and a checkpoint per batch, pacing from ``x-rate-limit-*`` so it never meets a 429);
- ``peer: twarc2-style``: the loop twarc2's ``hydrate`` runs (re-implemented here on httpx, twarc is not a
  dependency): 100 ids a request, answers appended to a JSON lines file, on a 429 sleep until
  ``x-rate-limit-reset``; no checkpoint (a crash starts over);
- ``peer: one id a request``: the naive loop a script without batching runs, on ``--naive-ids`` of the ids
  (default 1,000; a 100k run of it would take hours at the limit): its figures are per record, comparable.

Prints per line: ids asked, records found, ids gone, requests, requests per record, 429s met, seconds waited for
the rate limit, wall seconds and records per second.

    python bench/release_hydrate.py [--ids 5000] [--limit 20] [--window 2] [--naive-ids 1000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from crawl_assets_tests.standins.x_api import XAPIServer  # noqa: E402
from crawl_assets_tests.standins.x_corpus import Corpus  # noqa: E402


def make_corpus(n: int) -> tuple[Corpus, list[str]]:
    """N posts by six authors over 30 days; 2% deleted and one author protected afterwards."""
    corpus = Corpus()
    users = [corpus.add_user(f"user{i}", f"User {i}") for i in range(6)]
    start = datetime.now(timezone.utc) - timedelta(days=30)
    step = 30 * 86400 / n
    ids = [corpus.add_tweet(users[i % 6], start + timedelta(seconds=i * step))["id"] for i in range(n)]
    for post_id in ids[::50]:
        del corpus.tweets[post_id]
    corpus.protected.add(users[5]["id"])
    return corpus, ids


class Checkpoints:
    def __init__(self) -> None:
        self.state: dict[str, Any] = {}
        self.saves = 0

    def load(self) -> dict[str, Any]:
        return dict(self.state)

    def save(self, state: dict[str, Any], **metadata: Any) -> None:
        self.state, self.saves = state, self.saves + 1


class Quiet:
    def info(self, msg: str) -> None:
        pass

    def warning(self, msg: str) -> None:
        print(f"  warning: {msg}", file=sys.stderr)


def ours(server: XAPIServer, ids: list[str], work: Path) -> dict[str, Any]:
    from crawl_assets import settings  # noqa: F401 - the environment below is read through it
    from crawl_assets.lake import Lake
    from crawl_assets.registry import SourceEntry
    from crawl_assets.sdk.sync import CollectEnv
    from crawl_assets.sdk.tenant_secrets import TenantSecret
    from crawl_assets.sources.x.collect import collect
    from crawl_assets.sources.x.resource import XResource

    (work / "imports" / "bench").mkdir(parents=True)
    (work / "imports" / "bench" / "ids.txt").write_text("\n".join(ids) + "\n")
    entry = SourceEntry(name="hydrate", tenant="bench", platform="x", kind="id_list", identifier="ids.txt")
    resource = XResource(base_url=server.url, secrets=[TenantSecret(tenant="bench", value="test-token")],
                         max_inline_wait_seconds=600, max_pages_per_run=10**6, reset_margin_seconds=0.05)
    started = time.perf_counter()
    collected = collect(resource, entry, CollectEnv(Lake(str(work / "lake")), "bench", Checkpoints(), Quiet()))
    wall = time.perf_counter() - started
    resource.close()
    meta = collected.metadata
    return {"asked": meta["ids_requested"], "found": meta["records_fetched"], "gone": meta["ids_gone"],
            "requests": meta["requests"], "429": meta["http_429"], "waited": meta["rate_limit_wait_seconds"],
            "wall": wall}


def twarc_style(server: XAPIServer, ids: list[str], work: Path, per_request: int) -> dict[str, Any]:
    """Batches of ``per_request`` ids; on a 429, sleep until the window resets; answers appended to a file."""
    found = gone = requests = throttled = 0
    waited = 0.0
    started = time.perf_counter()
    with httpx.Client(base_url=server.url, headers={"Authorization": "Bearer test-token"}, timeout=30) as http, \
            open(work / f"peer-{per_request}.jsonl", "wb") as out:
        for start in range(0, len(ids), per_request):
            chunk = ids[start:start + per_request]
            while True:
                requests += 1
                resp = http.get("/2/tweets", params={"ids": ",".join(chunk), "tweet.fields": "created_at,author_id"})
                if resp.status_code != 429:
                    break
                throttled += 1
                pause = max(0.0, int(resp.headers.get("x-rate-limit-reset", "0")) - time.time()) + 0.05
                waited += pause
                time.sleep(pause)
            resp.raise_for_status()
            body = resp.json()
            out.write(orjson.dumps(body) + b"\n")
            found += len(body.get("data") or ())
            gone += sum(1 for e in body.get("errors") or () if e.get("parameter") == "ids")
    return {"asked": len(ids), "found": found, "gone": gone, "requests": requests, "429": throttled,
            "waited": waited, "wall": time.perf_counter() - started}


def row(name: str, r: dict[str, Any]) -> str:
    per = r["requests"] / max(r["found"], 1)
    return (f"{name:<28} {r['asked']:>8} {r['found']:>8} {r['gone']:>6} {r['requests']:>8} {per:>9.3f} "
            f"{r['429']:>5} {r['waited']:>8.1f} {r['wall']:>8.1f} {r['found'] / r['wall']:>9.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", type=int, default=5000)
    parser.add_argument("--limit", type=int, default=20, help="requests per window on GET /2/tweets")
    parser.add_argument("--window", type=float, default=2.0, help="seconds per rate-limit window")
    parser.add_argument("--naive-ids", type=int, default=1000)
    args = parser.parse_args()
    import os

    made = time.perf_counter()
    corpus, ids = make_corpus(args.ids)
    print(f"{args.ids} ids ({len(ids) - len([i for i in ids if i in corpus.tweets])} deleted, one author of six "
          f"protected), limit {args.limit} requests / {args.window:g} s; corpus built in "
          f"{time.perf_counter() - made:.1f} s")
    print(f"{'':<28} {'ids':>8} {'found':>8} {'gone':>6} {'requests':>8} {'req/rec':>9} {'429':>5} "
          f"{'waited s':>8} {'wall s':>8} {'rec/s':>9}")
    runs = (("crawl-assets id_list", lambda s, w: ours(s, ids, w)),
            ("peer: twarc2-style (100)", lambda s, w: twarc_style(s, ids, w, 100)),
            ("peer: one id a request", lambda s, w: twarc_style(s, ids[:args.naive_ids], w, 1)))
    for name, run in runs:
        with tempfile.TemporaryDirectory(prefix="bench-hydrate-") as tmp, \
                XAPIServer(corpus, rate_limit=args.limit, window_seconds=args.window) as server:
            work = Path(tmp)
            os.environ.update(DAGSTER_HOME=str(work), CRAWL_IMPORT_ROOT=str(work / "imports"))
            result = run(server, work)
            assert result["found"], f"{name} found nothing: a broken run, not a figure"
            print(row(name, result), flush=True)


if __name__ == "__main__":
    main()
