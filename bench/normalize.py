"""Bench: `crawl-assets normalize --format x-v2` vs `twarc2 csv` vs an orjson parse-only loop.

Prints records/s and peak RSS of each (whole processes, measured side by side in one run on the same
file), then the ratios against the targets: >= 10x twarc-csv, within 2x of parse-only, <= 150 MiB.

The input (bench/out/x_v2_<N>.jsonl, made once) imitates what twarc2 writes for search/recent with its
default expansions: 100 tweets per page, every tweet with context annotations, entity annotations and
edit controls, full user objects and referenced tweets in ``includes``, ~60% Persian text. Only documented
API v2 fields twarc-csv 0.7.2 knows are used: it drops a whole batch on a column it does not know (a user's
``public_metrics.like_count`` made it write 0 rows), so every contender's output rows are counted and must
equal the input's tweets.

twarc-csv runs from its own virtualenv (bench/out/twarc-venv, created if missing) with pandas<3: twarc-csv
0.7.2 crashes under pandas 3. Usage: python bench/normalize.py [--tweets 100000] [--skip-twarc] [--repeat 3]
Figures are printed for wall time and for the process's own CPU time (user+sys), which is steadier when
the machine is shared; the best of ``--repeat`` interleaved runs is kept.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import subprocess
import sys
import tempfile
import time
import venv
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import orjson
import psutil

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
ROOT = HERE.parent
TWARC_VENV = OUT / "twarc-venv"

PERSIAN = [
    "امروز گزارش تازه‌ای درباره وضعیت بازار و قیمت‌ها منتشر شد و کارشناسان آن را بررسی کردند",
    "می‌خواهم نظرتان را درباره این موضوع مهم بدانم؛ لطفاً در پاسخ‌ها بنویسید",
    "قيمت نان و لبنيات در تهران ۱۵٪ بالا رفت و مردم نگران ماه‌های آینده هستند",
    "جلسه بعدی شورای شهر ساعت ۱۸:۳۰ برگزار می‌شود و پخش زنده خواهد داشت",
    "خبــــر فوری: بارش برف سنگین در استان‌های شمالی کشور و بسته شدن جاده‌ها",
    "گفت‌وگوی امروز با مهمان برنامه را از دست ندهید؛ درباره آینده آموزش صحبت می‌کنیم",
]
ARABIC = ["هذا خبر عاجل من المراسل في المدينة حول الأوضاع الاقتصادية الجديدة", "شكرا جزيلا على المتابعة اليومية"]
ENGLISH = ["New report on regional markets is out today, with figures for the last quarter", "Thanks for the feedback"]
TAGS = ["خبر_فوری", "اقتصاد", "تهران", "news", "Markets", "عاجل"]
DOMAINS = [("10", "Person", "Named people in the world"), ("35", "Politician", "Politicians in the world"),
           ("46", "Business Taxonomy", "Categories within Brand Verticals"), ("131", "Unified Twitter Taxonomy",
           "A taxonomy view into the Semantic Core knowledge graph")]  # fmt: skip


def _user(rng: random.Random, user_id: str) -> dict[str, Any]:
    handle = f"user_{user_id[-6:]}"
    return {
        "id": user_id, "name": f"Sample {user_id[-4:]}", "username": handle, "created_at": "2015-03-01T10:00:00.000Z",
        "description": rng.choice(PERSIAN) + " #" + rng.choice(TAGS), "location": "تهران، ایران",
        "pinned_tweet_id": "1700000000000000000", "profile_image_url": f"https://pbs.example.com/p/{handle}.jpg",
        "protected": False, "url": "https://t.co/profile1", "verified": False, "verified_type": "none",
        "public_metrics": {"followers_count": rng.randint(0, 10**5), "following_count": rng.randint(0, 2000),
                           "tweet_count": rng.randint(0, 10**5), "listed_count": rng.randint(0, 99)},
        "entities": {"url": {"urls": [{"start": 0, "end": 23, "url": "https://t.co/profile1",
                                       "expanded_url": "https://example.org/me", "display_url": "example.org/me"}]}},
    }  # fmt: skip


def _tweet(rng: random.Random, tweet_id: int, when: datetime, author: str, users: list[str]) -> dict[str, Any]:
    pool = rng.choices([PERSIAN, ARABIC, ENGLISH], weights=[6, 2, 2])[0]
    body = " ".join(rng.sample(pool, k=min(2, len(pool))))
    mention = rng.choice(users)
    tag = rng.choice(TAGS)
    text = f"@user_{mention[-6:]} {body} #{tag} https://t.co/abc123"
    start_tag = text.index("#")
    return {
        "id": str(tweet_id), "text": text, "author_id": author, "conversation_id": str(tweet_id),
        "created_at": when.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "lang": "fa" if pool is PERSIAN else "ar" if pool is ARABIC else "en",
        "source": "Twitter for Android", "possibly_sensitive": False, "reply_settings": "everyone",
        "edit_history_tweet_ids": [str(tweet_id)],
        "edit_controls": {"edits_remaining": 5, "is_edit_eligible": True, "editable_until": "2024-05-01T11:00:00.000Z"},
        "public_metrics": {"retweet_count": rng.randint(0, 99), "reply_count": rng.randint(0, 20), "like_count":
                           rng.randint(0, 500), "quote_count": 1, "bookmark_count": 0, "impression_count": 1234},
        "entities": {
            "mentions": [{"start": 0, "end": 12, "username": f"user_{mention[-6:]}", "id": mention}],
            "hashtags": [{"start": start_tag, "end": start_tag + 1 + len(tag), "tag": tag}],
            "urls": [{"start": len(text) - 23, "end": len(text), "url": "https://t.co/abc123",
                      "expanded_url": "https://example.org/news/2024/05/01/report", "display_url": "example.org/news/2024/0…"}],
            "annotations": [{"start": 20, "end": 24, "probability": 0.61, "type": "Place", "normalized_text": "تهران"}],
        },
        "context_annotations": [
            {"domain": {"id": d[0], "name": d[1], "description": d[2]},
             "entity": {"id": str(1000000 + rng.randint(0, 9999)), "name": rng.choice(["Economy", "News", "Weather"]),
                        "description": "Sample entity"}}
            for d in rng.sample(DOMAINS, k=rng.randint(2, 4))
        ],
    }  # fmt: skip


def make_input(path: Path, tweets: int, per_page: int = 100, seed: int = 7) -> None:
    """Write ``tweets`` tweets in search/recent pages of ``per_page``, as twarc2 writes them."""
    rng = random.Random(seed)
    users = [str(9_000_000 + i) for i in range(500)]
    when = datetime(2024, 5, 1, tzinfo=timezone.utc)
    tweet_id = 1_790_000_000_000_000_000
    with path.open("wb") as out:
        for page_number in range(0, tweets, per_page):
            data, referenced = [], []
            for _ in range(min(per_page, tweets - page_number)):
                tweet_id += rng.randint(10_000, 9_000_000)
                when += timedelta(seconds=rng.randint(1, 60))
                tweet = _tweet(rng, tweet_id, when, rng.choice(users), users)
                roll = rng.random()
                if roll < 0.3 and data:
                    ref = rng.choice(data)
                    kind = "replied_to" if roll < 0.15 else "quoted" if roll < 0.22 else "retweeted"
                    tweet["referenced_tweets"] = [{"type": kind, "id": ref["id"]}]
                    if kind == "replied_to":
                        tweet["in_reply_to_user_id"] = ref["author_id"]
                    referenced.append(ref)
                data.append(tweet)
            authors = {t["author_id"] for t in data} | {m["id"] for t in data for m in t["entities"]["mentions"]}
            page = {
                "data": data[::-1],
                "includes": {"users": [_user(rng, u) for u in sorted(authors)], "tweets": referenced},
                "meta": {"newest_id": data[-1]["id"], "oldest_id": data[0]["id"], "result_count": len(data),
                         "next_token": f"b26v89c19zqg8o3f{page_number}"},
                "__twarc": {"url": "https://api.twitter.com/2/tweets/search/recent?query=news", "version": "2.14.0",
                            "retrieved_at": "2024-05-02T10:00:00+00:00"},
            }  # fmt: skip
            out.write(orjson.dumps(page) + b"\n")


def _tree_rss(pid: int) -> int:
    """Resident bytes of a process plus the memory private to each of its descendants (workers included).

    A forked child shares its parent's pages until it writes or execs: summing every process's RSS counted
    those pages twice whenever a sample fell between a fork and its exec (bench/pipeline.py saw 609 MiB for a
    304 MiB process as Dagster forked it to start its compute-log watcher). A descendant's own memory is its
    unique set size (USS); pages it shares with the tree are in the root's RSS already; one not exec'd yet after
    a vfork shares the parent's whole memory and is left out (``_not_exec_yet``)."""
    try:
        root = psutil.Process(pid)
        total = root.memory_info().rss
        children = root.children(recursive=True)
    except psutil.Error:
        return 0
    for proc in children:
        try:
            if _not_exec_yet(proc):
                continue
            total += proc.memory_full_info().uss
        except psutil.Error:
            pass
    return total


def _not_exec_yet(proc: psutil.Process) -> bool:
    """A child between vfork and exec: it runs in its parent's memory (same mm: the same RSS to the page and the
    same program), so all of that memory looks private to it too. Slow to exec on a loaded machine, such windows
    were sampled (the Telegram chain at 20k messages showed 264 + 264 MiB)."""
    parent = proc.parent()
    return parent is not None and proc.memory_info().rss == parent.memory_info().rss and proc.exe() == parent.exe()


def measure(cmd: list[str], stdout: Any = subprocess.DEVNULL, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> tuple[float, float, float, int]:
    """(wall s, user+sys CPU s of the process and its workers, peak RSS MiB, exit code) of one command.

    Peak RSS is the larger of the kernel's own peak for the process (os.wait4) and the peak of the
    process tree sampled every 100 ms (``_tree_rss``: the process's RSS plus each descendant's private memory,
    so worker processes count and pages a forked child still shares are counted once)."""
    start = time.perf_counter()
    # stderr to a file, not a pipe: twarc2's progress bar would fill a pipe and block.
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=errors, cwd=cwd, env=env)
        peak = 0
        while True:
            waited, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if waited:
                break
            peak = max(peak, _tree_rss(proc.pid))
            time.sleep(0.1)
        elapsed = time.perf_counter() - start
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(f"  ! {' '.join(cmd[:3])}... exited {code}: {stderr.strip()[-500:]}", file=sys.stderr)
    return elapsed, usage.ru_utime + usage.ru_stime, max(usage.ru_maxrss * 1024, peak) / 2**20, code


PARSE_ONLY = """
import sys, orjson
n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        for tweet in orjson.loads(line).get("data", ()):
            n += 1
print(n)
"""


def twarc_csv() -> Path | None:
    """The twarc2 executable of the bench's own virtualenv (created with twarc-csv and pandas<3)."""
    exe = TWARC_VENV / "bin" / "twarc2"
    if exe.exists():
        return exe
    print("creating", TWARC_VENV, "(twarc, twarc-csv 0.7.2, pandas<3) ...", file=sys.stderr)
    venv.create(TWARC_VENV, with_pip=True)
    pip = [str(TWARC_VENV / "bin" / "python"), "-m", "pip", "install", "-q"]
    result = subprocess.run(pip + ["twarc==2.14.*", "twarc-csv==0.7.2", "pandas<3"], check=False)
    return exe if result.returncode == 0 and exe.exists() else None


def _lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def _csv_rows(path: Path) -> int:
    with path.open(newline="", encoding="utf-8") as handle:
        return sum(1 for _ in csv.DictReader(handle))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tweets", type=int, default=100_000)
    parser.add_argument("--skip-twarc", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of every contender")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    data = OUT / f"x_v2_{args.tweets}.jsonl"
    if not data.exists():
        make_input(data, args.tweets)
    size = data.stat().st_size / 2**20
    print(f"input: {data.relative_to(ROOT)} ({args.tweets:,} tweets, {size:.0f} MiB)")

    python = sys.executable
    crawl = [python, "-m", "crawl_assets.cli.main", "normalize", "-q", "--format", "x-v2"]
    alone = [python, "-m", "crawl_assets.cli.normalize", "-q", "--format", "x-v2"]
    edges = ["--relations-out", str(OUT / "edges.jsonl"), str(data)]
    records_out = OUT / "records.jsonl"
    csv_out = OUT / "twarc.csv"
    # Every contender writes what it produces to a real file, and its output is counted after each run:
    # a contender that produced nothing (or less than the input) is reported, never compared.
    contenders: list[tuple[str, list[str], Path | None]] = [
        ("parse-only (orjson)", [python, "-c", PARSE_ONLY, str(data)], None),
        ("crawl-assets normalize", crawl + edges, records_out),
        ("  same, module alone", alone + edges, records_out),
        ("  same, one process", alone + ["--jobs", "1"] + edges, records_out),
    ]
    if not args.skip_twarc:
        exe = twarc_csv()
        if exe is None:
            sys.exit("twarc-csv could not be installed: no baseline (use --skip-twarc to measure ours alone)")
        contenders.append(("twarc2 csv", [str(exe), "--bearer-token", "dummy", "csv", str(data), str(csv_out)], None))
    runs: dict[str, tuple[float, float, float, int]] = {}
    produced: dict[str, int] = {}
    # Interleaved repeats, best CPU of each, the peer as many times as ours: the machine may be shared,
    # and the first read warms the page cache.
    for _ in range(args.repeat):
        for label, cmd, stdout_file in contenders:
            if stdout_file is None:
                result = measure(cmd, cwd=OUT)
            else:
                with stdout_file.open("wb") as sink:
                    result = measure(cmd, stdout=sink, cwd=OUT)
            if label == "twarc2 csv":
                produced[label] = _csv_rows(csv_out)
            elif stdout_file is not None:
                produced[label] = _lines(stdout_file)
            if label not in runs or result[1] < runs[label][1]:
                runs[label] = result

    n = args.tweets
    print(f"{'what':<26}{'wall s':>8}{'CPU s':>8}{'records/s wall':>16}{'records/s CPU':>15}{'peak RSS MiB':>14}{'output':>10}")
    for label, (wall, cpu, rss, code) in runs.items():
        note = "" if code == 0 else f"  (exit {code})"
        rows = f"{produced[label]:,}" if label in produced else "-"
        print(f"{label:<26}{wall:>8.2f}{cpu:>8.2f}{n / wall:>16,.0f}{n / cpu:>15,.0f}{rss:>14.0f}{rows:>10}{note}")
    short = {label: rows for label, rows in produced.items() if rows != n}
    if short:
        sys.exit(f"not comparable: these wrote a different number of rows than the {n:,} input tweets: {short}")
    ours, parse = runs["crawl-assets normalize"], runs["parse-only (orjson)"]
    one = runs["  same, one process"]
    print(f"ours / parse-only time: {ours[0] / parse[0]:.2f}x wall, {ours[1] / parse[1]:.2f}x CPU (target <= 2x)")
    print(f"  one process / parse-only time: {one[0] / parse[0]:.2f}x wall, {one[1] / parse[1]:.2f}x CPU")
    if "twarc2 csv" in runs:
        twarc = runs["twarc2 csv"]
        print(f"ours vs twarc2 csv records/s: {twarc[0] / ours[0]:.1f}x wall, {twarc[1] / ours[1]:.1f}x CPU (target >= 10x)")
        print(f"  one process vs twarc2 csv records/s: {twarc[0] / one[0]:.1f}x wall, {twarc[1] / one[1]:.1f}x CPU")
    print(f"ours peak RSS: {ours[2]:.0f} MiB, module alone {runs['  same, module alone'][2]:.0f} MiB (target <= 150)")


if __name__ == "__main__":
    main()
