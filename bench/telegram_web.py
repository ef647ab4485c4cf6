"""The ``web_channel`` kind against the t.me/s stand-in: a generated public channel (default 100k messages, 5,000
pages) read whole, beside a named peer that reads the same pages.

The stand-in runs in its own process (``crawl_assets_tests.standins.telegram_web``), so the figures and the peak
RSS are the reader's alone. Ours: the whole first sync through the Telegram collector (every page fetched,
parsed, stored in the lake as a raw batch and checkpointed, no pacing gap), then the normalization of the stored
pages into records. The peer: snscrape's ``TelegramChannelScraper`` (PyPI ``snscrape``, BeautifulSoup + lxml),
which only walks and parses the pages (it stores nothing), pointed at the stand-in instead of t.me; each in a
fresh process.

    python bench/telegram_web.py [--messages 100000] [--peer-only]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from peak import peak_rss_mib  # noqa: E402  (bench/peak.py)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CHANNEL = "benchchannel"




def ours(url: str, messages: int) -> dict:
    from crawl_assets.lake import Lake
    from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
    from crawl_assets.registry import SourceEntry
    from crawl_assets.sdk.sync import CollectEnv
    from crawl_assets.sources.telegram.collect import collect
    from crawl_assets.sources.telegram.resource import TelegramResource
    from crawl_assets_tests.sources.test_plain_collector import Log, MemoryCheckpointer

    entry = SourceEntry(name="bench", platform="telegram", kind="web_channel", identifier=CHANNEL)
    with tempfile.TemporaryDirectory() as tmp:
        res = TelegramResource(web_base_url=url, web_request_interval_seconds=0.0,
                               max_pages_per_run=messages // 20 + 10, pages_per_checkpoint=10)
        lake = Lake(str(Path(tmp) / "lake"))
        env = CollectEnv(lake, "bench", MemoryCheckpointer({}), Log())
        rss_before = peak_rss_mib()
        started = time.perf_counter()
        collected = collect(res, entry, env)
        sync_seconds = time.perf_counter() - started
        rss_sync = peak_rss_mib()
        started = time.perf_counter()
        records = 0
        for batch in collected.batches:
            part = lake.table_part(TABLE, entry.tenant, "telegram", entry.key, batch.manifest.batch_id)
            records += normalize_batch(lake, batch, part, jobs=1).rows
        normalize_seconds = time.perf_counter() - started
        meta = collected.metadata
        return {"reader": "crawl_assets web_channel", "pages": meta["pages"], "messages": meta["records_fetched"],
                "seconds": round(sync_seconds, 2), "complete": meta["complete"],
                "raw_bytes": sum(b.manifest.bytes for b in collected.batches),
                "normalized_records": records, "normalize_seconds": round(normalize_seconds, 2),
                "peak_rss_mib_sync": round(rss_sync, 1), "rss_mib_before": round(rss_before, 1),
                "peak_rss_mib": round(peak_rss_mib(), 1)}


def peer(url: str) -> dict:
    """snscrape's Telegram channel scraper over the stand-in (its own code; only the first page's URL is ours)."""
    try:
        import snscrape.base
        import snscrape.modules.telegram as sn
    except Exception as exc:  # noqa: BLE001 - reported, not hidden
        return {"reader": "snscrape", "error": f"{type(exc).__name__}: {exc}"}

    class Local(sn.TelegramChannelScraper):
        def _initial_page(self):  # type: ignore[no-untyped-def]
            if self._initialPage is None:
                r = self._get(f"{url}/s/{self._name}", headers=self._headers)
                if r.status_code != 200:
                    raise snscrape.base.ScraperException(f"Got status code {r.status_code}")
                import bs4

                self._initialPage, self._initialPageSoup = r, bs4.BeautifulSoup(r.text, "lxml")
            return self._initialPage, self._initialPageSoup

    rss_before = peak_rss_mib()
    started = time.perf_counter()
    scraper = Local(CHANNEL, retries=0)
    count = 0
    for _ in scraper.get_items():
        count += 1
    seconds = time.perf_counter() - started
    return {"reader": "snscrape 0.7 TelegramChannelScraper", "messages": count, "pages": -(-count // 20),
            "seconds": round(seconds, 2), "rss_mib_before": round(rss_before, 1), "peak_rss_mib": round(peak_rss_mib(), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--child", choices=["ours", "peer"], help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--peer-only", action="store_true")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(ours(args.url, args.messages) if args.child == "ours" else peer(args.url)))
        return
    server = subprocess.Popen([sys.executable, "-m", "crawl_assets_tests.standins.telegram_web", "--messages",
                               str(args.messages), "--name", CHANNEL], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        results = []
        for child in (["peer"] if args.peer_only else ["ours", "peer"]):
            out = subprocess.run([sys.executable, __file__, "--child", child, "--url", url, "--messages",
                                  str(args.messages)], cwd=ROOT, capture_output=True, text=True, timeout=3600)
            if out.returncode != 0:
                results.append({"reader": child, "error": out.stderr.strip().splitlines()[-1:]})
                continue
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    print(f"t.me/s stand-in channel of {args.messages:,} messages ({args.messages // 20:,} pages of 20), each reader "
          "in its own process, the stand-in in another")
    print(f"{'reader':<38} {'pages':>7} {'messages':>9} {'seconds':>8} {'pages/s':>8} {'msgs/s':>8} {'peak RSS MiB':>13}")
    for r in results:
        if "error" in r:
            print(f"{r['reader']:<38} failed: {r['error']}")
            continue
        print(f"{r['reader']:<38} {r['pages']:>7} {r['messages']:>9} {r['seconds']:>8} "
              f"{r['pages'] / r['seconds']:>8.1f} {r['messages'] / r['seconds']:>8.0f} {r['peak_rss_mib']:>13}")
    for r in results:
        if r.get("normalized_records"):
            print(f"ours, then: {r['normalized_records']:,} records normalized from the stored pages in "
                  f"{r['normalize_seconds']} s ({r['normalized_records'] / r['normalize_seconds']:,.0f} records/s); "
                  f"raw pages stored: {r['raw_bytes'] / 2**20:.1f} MiB (before gzip); peak RSS after the sync "
                  f"{r['peak_rss_mib_sync']} MiB (at start {r['rss_mib_before']} MiB); history complete: {r['complete']}")
    print("ours stores every page (gzip raw batch, checkpoint per 10 pages); the peer only parses and yields posts")


if __name__ == "__main__":
    main()
