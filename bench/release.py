"""Bench: a release of N normalized records (default 200k) from a lake of 20 parts, beside the plain export of
the same records a user would otherwise run (``crawl-assets records --parquet``: the latest observation of
each key into one Parquet file), then ``release verify`` and ``release import`` of the package.

Each measurement runs in its own process, so its peak RSS is its own: records/s (wall), wall time, peak RSS.
Records are Telegram messages (full records) and X posts (ids only), Persian and English text, with replies.
Goal (issue 37): 1M records within 500 MiB; the CI machine's 2 shared cores bound the default size here.
Usage: python bench/release.py [--records 200000] [--keep] [--only peer release verify import]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from peak import peak_rss_mib  # noqa: E402  (bench/peak.py)

PARTS = 20
WORDS = ("بازار قیمت گزارش شهر جلسه شورا هوا برف جاده مدرسه market price report city council meeting weather snow "
         "road school").split()


def make_lake(root: Path, records: int) -> None:
    from crawl_assets.lake import Lake
    from crawl_assets.lake.tables import records_to_arrow
    from crawl_assets.pipeline.relate.stage import write_relations
    from crawl_assets.pipeline.version import NORMALIZER_VERSION

    lake, rng = Lake(str(root)), random.Random(37)
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    per_part = records // PARTS
    for part in range(PARTS):
        platform = "x" if part % 4 == 0 else "telegram"
        source = f"bench.{platform}.main"
        rows = []
        for i in range(part * per_part, (part + 1) * per_part):
            key = f"x:{i}" if platform == "x" else f"telegram:777:{i}"
            at = (t0 + timedelta(minutes=i)).isoformat().replace("+00:00", "Z")
            reply = (f"x:{i - 1}" if platform == "x" else f"telegram:777:{i - 1}") if i % 3 and i else None
            rows.append({"key": key, "platform": platform, "tenant": "bench", "source": source, "kind": "post",
                         "native_id": str(i), "author_id": str(rng.randrange(5000)), "author_handle": None,
                         "created_at": at, "text": " ".join(rng.choice(WORDS) for _ in range(15)),
                         "text_clean": "", "lang": rng.choice(["fa", "en"]), "reply_to": reply,
                         "hashtags": [f"tag{rng.randrange(50)}"], "mentions": [], "urls": [], "media": [],
                         "metrics": {}, "metadata": {}, "enrichment": {},
                         "provenance": {"collected_at": at, "method": "api", "source": "main", "format": platform,
                                        "run_id": "bench", "raw_pointer": None, "raw_line": i, "flags": []}})
        batch = f"20260101T0000{part:02d}000000Z-bench-{part:04d}"
        lake.write_part(lake.table_part("normalized_records", "bench", platform, source, batch),
                        records_to_arrow(rows), version=NORMALIZER_VERSION)
    for platform in ("x", "telegram"):
        write_relations(lake, "bench", platform, f"bench.{platform}.main")


def _child(what: str, home: Path) -> None:
    os.environ.update({"DAGSTER_HOME": str(home), "CRAWL_LAKE": str(home / "lake"),
                       "CRAWL_IMPORT_ROOT": str(home / "imports")})
    from crawl_assets import settings
    from crawl_assets.lake import Lake

    lake = Lake(settings.lake_root())
    start = time.perf_counter()
    if what == "release":
        from crawl_assets.release import ReleaseQuery, create_release

        rows = create_release(lake, ReleaseQuery("bench"), "bench").records
    elif what == "peer":
        import pyarrow.parquet as pq

        from crawl_assets.pipeline.reader import latest_batches

        rows, writer = 0, None
        for batch in latest_batches(lake, "bench", deleted=False):
            writer = writer or pq.ParquetWriter(home / "peer.parquet", batch.schema, compression="zstd")
            writer.write_batch(batch)
            rows += batch.num_rows
        writer.close()
    elif what == "verify":
        from crawl_assets.release import verify_package

        _, problems = verify_package(settings.release_root() / "bench" / "bench")
        assert not problems, problems
        rows = sum(1 for _ in open(settings.release_root() / "bench" / "bench" / "records.jsonl", "rb"))
    else:
        from crawl_assets.release import import_release

        shutil.copytree(settings.release_root() / "bench" / "bench", home / "imports" / "lab" / "pkg")
        rows = import_release(Lake(str(home / "lake2")), "lab", home / "imports" / "lab" / "pkg").records
    wall = time.perf_counter() - start
    print(json.dumps({"what": what, "rows": rows, "wall_s": round(wall, 2),
                      "peak_rss_mib": peak_rss_mib()}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--only", nargs="+", choices=("peer", "release", "verify", "import"), default=None,
                        help="Only these measurements (release must run before verify and import).")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]))
        return
    home = Path(tempfile.mkdtemp(prefix="bench-release-"))
    try:
        start = time.perf_counter()
        make_lake(home / "lake", args.records)
        print(f"lake of {args.records} records in {PARTS} parts made in {time.perf_counter() - start:.1f}s")
        print(f"{'what':<44}{'rows':>9}{'wall s':>9}{'rows/s':>10}{'peak RSS MiB':>14}")
        for what, label in (("peer", "peer: records --parquet (one Parquet file)"),
                            ("release", "ours: release create (Parquet+JSONL+sheet)"),
                            ("verify", "ours: release verify"), ("import", "ours: release import (validated)")):
            if args.only and what not in args.only:
                continue
            out = subprocess.run([sys.executable, __file__, "--child", what, str(home)], check=True,
                                 capture_output=True, text=True).stdout.strip().splitlines()[-1]
            m = json.loads(out)
            if not m["rows"]:
                raise SystemExit(f"{label}: produced nothing: a failed measurement")
            print(f"{label:<44}{m['rows']:>9}{m['wall_s']:>9}{m['rows'] / max(m['wall_s'], 1e-9):>10.0f}"
                  f"{m['peak_rss_mib']:>14}")
    finally:
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
