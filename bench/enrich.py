"""Bench: each enricher on 100k normalized records, side by side with what a user would otherwise run.

Per enricher, each measurement in its own process (so peak RSS is that enricher's): records/s per core
(records / the process's CPU time, user+sys; every implementation here is single-threaded) and wall time,
peak RSS (and its growth over the RSS with the libraries loaded: "+work"), and the rows each produced
(a peer that produced nothing is reported as a failed baseline; scrubadub's peak is that of its own
process, imports included).

* ours: ``enrich_source`` over a lake of 10 normalized parts of 10k records (reads the parts, writes the
  feature parts; tenant-wide enrichers also combine), exactly what the Dagster asset runs;
* peers, on the same records read from one Parquet file:
  - personal_data: scrubadub 2.0.1 (``Scrubber().iter_filth`` with its default detectors), from its own
    virtualenv (bench/out/scrubadub-venv, created if missing); on ``--peer-sample`` records (it is slow);
  - near_duplicates: datasketch used as its documentation shows (``MinHash.update`` per shingle,
    ``MinHashLSH`` insert and query, union-find over the candidates), same shingles and threshold;
  - trends: pandas (explode hashtags and terms, distinct records per term and window, mean of the 7
    preceding windows by rolling over a pivot, scipy's Poisson tail), same rules;
  - account_activity: pandas ``groupby(...).apply`` computing the same features per author;
  - classifier: the baseline model's ``predict_proba`` on a list of texts (the floor of the hook);
  - topics: scikit-learn's own pipeline as its documentation shows (``TfidfVectorizer`` with the same
    document-frequency bounds and vocabulary size, ``NMF`` with the same components, start and solver,
    ``fit_transform`` over every record, topic = the heaviest component);
  - entities: one regular expression of every gazetteer name (Python ``re``, an alternation, longest
    first), what a user would write before any rule (it finds gazetteer names only).

Memory of the tenant-wide topic model: ``--records N`` at sizes the machine allows (the issue asks for
<= 1 GiB at 1M records); the figures say how peak RSS grows with N, and docs/OPERATIONS.md extrapolates.
  - places: one regular expression of every gazetteer name, no disambiguation;
  - coordination: CooRnet's URL co-sharing as a pandas self-join on the URL (URLs only; ours also pairs
    hashtags, reposts and near-duplicate texts);
  - account_types: the account_activity peer (the same per-author features by ``groupby.apply``).

Goals (issue 21): trends and account activity >= 100k records/s, near-duplicates >= 20k, personal data
>= 50k, memory bounded. Usage: python bench/enrich.py [--records 100000] [--repeat 3] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import time
import venv
from datetime import datetime, timedelta, timezone
from pathlib import Path

import enrich_peers  # bench/enrich_peers.py: what each enricher is measured against
from peak import peak_rss_mib  # noqa: E402  (bench/peak.py)

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
SCRUB_VENV = OUT / "scrubadub-venv"
PARTS = 10
GOALS = {"personal_data": 50_000, "near_duplicates": 20_000, "account_activity": 100_000, "trends": 100_000,
         "classifier": None, "topics": None, "entities": None}
GOALS.update({"places": None, "coordination": None, "account_types": None})  # issue 35 (memory: <= 1 GiB at 1M)
PLACES = ("تهران شیراز تبریز مشهد اصفهان کابل بغداد Tehran London Paris Berlin Cairo Dubai استان فارس "
          "Istanbul بیروت دمشق").split()
EN = ("market price report city council meeting weather snow road school teacher water power outage bus train "
      "ticket hospital doctor football match team goal music concert film review phone app update bug login "
      "delivery order late refund support thanks please today tomorrow morning evening people street").split()
FA = ("بازار قیمت گزارش شهر جلسه شورا هوا برف جاده مدرسه معلم آب برق قطعی اتوبوس قطار بلیت بیمارستان پزشک "
      "فوتبال مسابقه تیم گل موسیقی کنسرت فیلم نقد گوشی برنامه به‌روزرسانی ورود تحویل سفارش دیر بازپرداخت "
      "پشتیبانی ممنون لطفا امروز فردا صبح عصر مردم خیابان").split()
TAGS = [f"tag{i}" for i in range(150)] + ["قطعی_برق", "اقتصاد", "تهران", "خبر_فوری"]
PERSIAN_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
ARABIC_DIGITS = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def _text(rng: random.Random) -> str:
    words = FA if rng.random() < 0.6 else EN
    return " ".join(rng.choice(words) for _ in range(rng.randint(8, 20)))


def _pii(rng: random.Random) -> str:
    phone = f"0912{rng.randint(1000000, 9999999)}"
    return rng.choice([f"call {phone}", f"شماره {phone.translate(PERSIAN_DIGITS)}",
                       f"رقم {phone.translate(ARABIC_DIGITS)}", f"mail user{rng.randint(1, 999)}@example.com"])


MENTIONS = ["in Tehran", "from Google", "Dr. Sara Karimi said", "at the United Nations", "در تهران",
            "آقای علی رضایی گفت", "سازمان ملل", "دانشگاه شریف", "في بغداد", "منظمة الصحة العالمية"]


def make_records(n: int, path: Path) -> None:
    """``n`` normalized records of our own making: 60% Persian, 15% copies of 400 lightly edited campaign
    texts, 5% with a phone (three digit systems) or e-mail, 10% naming a person, organization or place,
    10% naming a place of the gazetteer, 20% sharing a link, 2% planted co-sharing groups, 10% reposts, 15%
    replies, one hashtag burst."""
    from crawl_assets.lake.tables import records_to_arrow
    from crawl_assets.normalize.text import clean_text
    import pyarrow.parquet as pq

    rng = random.Random(21)
    campaigns = [_text(rng) for _ in range(400)]
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    rows = []
    campaign = 0  # 2% of records: 20 planted groups of 5 accounts sharing one link each within 30 s
    for i in range(n):
        at = t0 + timedelta(seconds=rng.randint(0, 30 * 86400))
        author = f"u{int(rng.paretovariate(1.2)) % 3000}"
        urls = [f"https://site{rng.randint(0, 50)}.example/{rng.randint(0, 2000)}"] if rng.random() < 0.2 else []
        if rng.random() < 0.02:
            g, m, j = campaign % 20, (campaign // 20) % 5, (campaign // 100) % 10
            campaign += 1
            author, urls = f"c{g}_{m}", [f"https://campaign{g}.example/{j}"]
            at = t0 + timedelta(days=j, hours=g, seconds=rng.randint(0, 30))
        roll = rng.random()
        text = rng.choice(campaigns) + rng.choice(["", "!", " " + rng.choice(EN)]) if roll < 0.15 else _text(rng)
        if rng.random() < 0.05:
            text += " " + _pii(rng)
        if rng.random() < 0.1:
            text += " " + rng.choice(MENTIONS)
        if rng.random() < 0.1:
            text += " " + rng.choice(PLACES)
        tags = [rng.choice(TAGS) for _ in range(rng.randint(0, 2))]
        if at.day == 25 and rng.random() < 0.3:
            tags.append("قطعی_برق")
        kind = "repost" if roll > 0.9 else "reply" if roll > 0.75 else "post"
        rows.append({"key": f"x:{i}", "platform": "x", "tenant": "bench", "source": "bench.x.main", "kind": kind,
                     "native_id": str(i), "author_id": author,
                     "author_handle": None, "created_at": at.isoformat(), "lang": "fa" if text[:1] > "z" else "en",
                     "text": text, "text_clean": clean_text(text), "hashtags": sorted(set(tags)),
                     "repost_of": "x:0" if kind == "repost" else None, "reply_to": "x:1" if kind == "reply" else None,
                     "urls": urls,
                     "provenance": {"collected_at": (at + timedelta(hours=1)).isoformat(), "method": "api"}})
    pq.write_table(records_to_arrow(rows), path)


def make_lake(records: Path, root: Path) -> None:
    import pyarrow.parquet as pq

    from crawl_assets.pipeline.version import NORMALIZER_VERSION
    from crawl_assets.lake import Lake

    table = pq.read_table(records)
    lake, size = Lake(str(root)), -(-table.num_rows // PARTS)
    for p in range(PARTS):
        part = lake.table_part("normalized_records", "bench", "x", "bench.x.main", f"20260101T0000{p:02d}000000Z-b")
        lake.write_part(part, table.slice(p * size, size), version=NORMALIZER_VERSION)


# -- workers (one process each) -------------------------------------------------------------------------
def ours(name: str, root: Path) -> int:
    from crawl_assets.enrich import build
    from crawl_assets.enrich.run import enrich_source
    from crawl_assets.lake import Lake

    shutil.rmtree(root / "features", ignore_errors=True)
    enricher = build(name)
    result = enrich_source(Lake(str(root)), enricher, "bench", "x", "bench.x.main")
    assert not result.failed, result.failed
    if result.tenant is None:
        return result.rows_written
    return result.tenant.rows["assignments" if name == "topics" else enricher.tables[0]]


def peer_scrubadub(texts_path: Path) -> int:
    code = ("import json,sys,scrubadub\ns=scrubadub.Scrubber()\nn=0\n"
            "for line in open(sys.argv[1]):\n    n+=sum(1 for _ in s.iter_filth(json.loads(line)))\nprint(n)")
    out = subprocess.run([str(SCRUB_VENV / "bin" / "python"), "-c", code, str(texts_path)], capture_output=True,
                         text=True, check=True)
    return int(out.stdout.split()[-1])


def worker(args: argparse.Namespace) -> None:
    # imports first: the figures are of the work, not of loading libraries (peak RSS includes them)
    import datasketch  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow.parquet as pq
    import scipy.stats  # noqa: F401
    import skops.io  # noqa: F401
    import sklearn.pipeline  # noqa: F401

    import crawl_assets.enrich.config  # noqa: F401
    import crawl_assets.enrich.run  # noqa: F401

    with open("/proc/self/statm") as fh:
        loaded = int(fh.read().split()[1]) * resource.getpagesize() / 2**20  # RSS with the libraries loaded
    wall, cpu = time.perf_counter(), time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    if args.impl == "ours":
        rows = ours(args.worker, Path(args.lake))
        n = pq.ParquetFile(args.records).metadata.num_rows
    elif args.worker == "personal_data":
        rows, n = peer_scrubadub(Path(args.texts)), sum(1 for _ in open(args.texts))
    else:
        table = pq.read_table(args.records)
        rows, n = getattr(enrich_peers, f"peer_{args.worker}")(table), table.num_rows
    done = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - cpu + (done.ru_utime + done.ru_stime - children.ru_utime - children.ru_stime)
    rss = max(peak_rss_mib(), done.ru_maxrss / 1024)  # a child of ours (scrubadub's venv) is its own peak
    print(json.dumps({"records": n, "rows": rows, "cpu_s": cpu, "wall_s": time.perf_counter() - wall, "rss_mib": rss,
                      "loaded_mib": loaded}))


def run(impl: str, name: str, args: argparse.Namespace, paths: dict[str, Path]) -> dict:
    out = subprocess.run([sys.executable, __file__, "--worker", name, "--impl", impl, "--records", str(paths["records"]),
                          "--lake", str(paths["lake"]), "--texts", str(paths["texts"])],
                         capture_output=True, text=True)
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def ensure_scrubadub() -> bool:
    if (SCRUB_VENV / "bin" / "python").exists():
        return True
    venv.create(SCRUB_VENV, with_pip=True)
    pip = [str(SCRUB_VENV / "bin" / "pip"), "install", "-q", "scrubadub==2.0.1"]
    return subprocess.run(pip, check=False).returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", default=100_000, type=lambda v: v if not v.isdigit() else int(v))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=list(GOALS))
    parser.add_argument("--peer-sample", type=int, default=10_000, help="records scrubadub reads (it is slow)")
    parser.add_argument("--worker"), parser.add_argument("--impl"), parser.add_argument("--lake")
    parser.add_argument("--texts")
    parser.add_argument("--no-peer", action="store_true", help="ours only (memory at sizes where peers are not asked)")
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    OUT.mkdir(exist_ok=True)
    paths = {"records": OUT / f"enrich_records_v2_{args.records}.parquet", "lake": OUT / f"enrich_lake_v2_{args.records}",
             "texts": OUT / f"enrich_texts_{args.records}_{args.peer_sample}.jsonl"}
    if not paths["records"].exists():
        make_records(args.records, paths["records"])
    if not paths["lake"].exists():
        make_lake(paths["records"], paths["lake"])
    if not paths["texts"].exists():
        import pyarrow.parquet as pq

        texts = pq.read_table(paths["records"], columns=["text"]).column("text").to_pylist()[:args.peer_sample]
        paths["texts"].write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in texts), encoding="utf-8")
    if "personal_data" in args.only and not ensure_scrubadub():
        print("scrubadub could not be installed: personal_data has no baseline in this run")
    results: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.repeat):  # interleaved: ours and the peer alternate, so a busy moment hits both
        for name in args.only:
            for impl in ("ours",) if args.no_peer else ("ours", "peer"):
                results.setdefault((name, impl), []).append(run(impl, name, args, paths))
    print(f"\n{'enricher':<17}{'impl':<6}{'records':>9}{'rows':>9}{'rec/s/core':>12}{'rec/s wall':>12}"
          f"{'peak MiB':>10}{'+work MiB':>10}   goal / vs peer")
    for name in args.only:
        best = {}
        for impl in ("ours", "peer"):
            if (name, impl) not in results:
                continue
            ok = [r for r in results[(name, impl)] if "error" not in r]
            if not ok:
                print(f"{name:<17}{impl:<6}  failed: {results[(name, impl)][-1]['error']}")
                continue
            r = best[impl] = max(ok, key=lambda r: r["records"] / r["cpu_s"])
            note = ""
            if impl == "ours" and GOALS[name]:
                note = f"goal >= {GOALS[name]:,}: {'met' if r['records'] / r['cpu_s'] >= GOALS[name] else 'NOT met'}"
            if impl == "peer":
                note = "BASELINE PRODUCED NOTHING" if r["rows"] == 0 else ""
                if "ours" in best and r["rows"]:
                    ratio = (best["ours"]["records"] / best["ours"]["cpu_s"]) / (r["records"] / r["cpu_s"])
                    note = f"ours {ratio:.1f}x the peer's records/s per core"
            print(f"{name:<17}{impl:<6}{r['records']:>9,}{r['rows']:>9,}{r['records'] / r['cpu_s']:>12,.0f}"
                  f"{r['records'] / r['wall_s']:>12,.0f}{r['rss_mib']:>10.0f}{r['rss_mib'] - r['loaded_mib']:>10.0f}   {note}")


if __name__ == "__main__":
    main()
