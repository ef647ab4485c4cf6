"""Valid inputs of every normalizer format, the starting points the fuzzers mutate.

Taken from what the project really reads: the bundled sample exports and recordings, and Telethon
messages made by the MTProto stand-in exactly as the collector stores them.
"""

from __future__ import annotations

import codecs
import csv
import dataclasses
import functools
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

ARCHIVE_PREFIX = b"window.YTD.tweets.part0 = "
SOURCES_TESTS = Path(__file__).resolve().parents[1] / "sources"


def golden_pages() -> dict[str, str]:
    """Format → platform, for the crawl-envelope formats whose seeds are the golden inputs of their source's
    tests (``crawl_assets_tests/sources/<platform>/golden/input.jsonl``: one API page per line)."""
    from crawl_assets.core import catalog

    return {name: platform for platform, spec in catalog.catalog().specs.items() for name in
            [f.name for f in spec.formats if f.envelope_field]
            if (SOURCES_TESTS / platform / "golden" / "input.jsonl").exists()}


def _sample(relative: str) -> bytes:
    return (resources.files("crawl_assets") / "sample_data" / relative).read_bytes()


@dataclass(frozen=True)
class FormatSeeds:
    """Items of one format, and how a list of (possibly mutated) items becomes that format's bytes."""

    items: tuple[Any, ...]
    encode: Callable[[list[Any]], bytes]
    line_based: bool  # one item per line (else: one whole document)
    max_huge: int = 100_000  # longest value the fuzzer puts in a field
    fmt: str = ""  # the format (the seeds' name when empty): several seed sets may share one format


def json_bytes(value: Any) -> bytes:
    """JSON as a careless producer writes it: big integers, NaN and lone surrogates included."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _lines(items: list[Any]) -> bytes:
    return b"\n".join(i if isinstance(i, bytes) else json_bytes(i) for i in items) + b"\n"


def _export(items: list[Any]) -> bytes:
    return json_bytes({"name": "کانال", "type": "public_channel", "id": 1987654321, "messages": items})


def _archive(items: list[Any]) -> bytes:
    return ARCHIVE_PREFIX + json_bytes(items)


def _golden_pages(fmt: str, platform: str) -> tuple[Any, ...]:
    """The golden input's good pages (the goldens also hold deliberately broken lines)."""
    from crawl_assets.normalize import NormalizeContext, normalize_stream
    from crawl_assets.schema import Rejection

    path = SOURCES_TESTS / platform / "golden" / "input.jsonl"
    good = []
    for line in path.read_bytes().splitlines():
        try:
            page = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        items = list(normalize_stream(fmt, io.BytesIO(line), name="seed", context=NormalizeContext()))
        if any(not isinstance(i, Rejection) for i in items):
            good.append(page)
    return tuple(good)


def _play_csv() -> FormatSeeds:
    """Google Play Console review exports: UTF-16 CSV with a header row; items are the data rows."""
    text = (SOURCES_TESTS / "play" / "golden" / "export.csv").read_bytes().decode("utf-16")
    header, *rows = list(csv.reader(io.StringIO(text)))

    def encode(items: list[Any]) -> bytes:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(header)
        for row in items:
            cells = row if isinstance(row, list) else [row]
            writer.writerow(["" if c is None else c if isinstance(c, str) else json.dumps(c) for c in cells])
        return out.getvalue().encode("utf-16", "surrogatepass")

    from crawl_assets.normalize import NormalizeContext, normalize_stream
    from crawl_assets.schema import Rejection

    def good(row: list[str]) -> bool:
        items = list(normalize_stream("play-csv", io.BytesIO(encode([row])), name="seed", context=NormalizeContext()))
        return bool(items) and not any(isinstance(i, Rejection) and i.error for i in items)

    # cells over the csv module's limit are a known bug: test_play_csv_cell_over_the_csv_limit_is_rejected
    return FormatSeeds(tuple(r for r in rows if good(r)), encode, False, max_huge=40_000)


def _web_pages() -> tuple[Any, ...]:
    """t.me/s pages of the web stand-in in the ``web_channel`` kind's envelopes (one with a deletion)."""
    from crawl_assets_tests.standins import telegram_mtproto as tm
    from crawl_assets_tests.standins.telegram_web import TelegramWebStandIn

    chat = tm.World().channel("seedchannel", messages=45, newest_at=datetime(2025, 1, 1, tzinfo=timezone.utc))
    chat.edit(44)
    render = TelegramWebStandIn({"seedchannel": chat}).render
    crawl = {"endpoint": "s", "web_channel": "seedchannel", "retrieved_at": "2025-01-01T00:00:00+00:00"}
    return ({"crawl": {**crawl, "vanished": [25]}, "response": render(chat, list(range(26, 46)))},
            {"crawl": {**crawl, "before": 26}, "response": render(chat, list(range(6, 26)))})


def _telethon_lines() -> tuple[Any, ...]:
    from telethon.tl import types

    from crawl_assets.sources.telegram.rawlines import deletion_line, message_line
    from crawl_assets_tests.standins import telegram_mtproto as tm

    world = tm.World()
    chat = world.channel("seed", messages=40, newest_at=datetime(2025, 1, 1, tzinfo=timezone.utc))
    chat.edit(7)
    lines = [orjson.loads(message_line(chat.message(i))) for i in range(1, 41)]
    peer = types.PeerChannel(chat.id)
    lines.append(orjson.loads(deletion_line(peer, 41, datetime(2025, 1, 2, tzinfo=timezone.utc))))
    return tuple(lines)


def _real_world_shapes() -> dict[str, list[Any]]:
    """Items of the real-world shapes of issues 14 and 29 (crawl_assets_tests/normalize/fixtures.py), per seed set."""
    from crawl_assets.normalize.sniff import mismatch
    from crawl_assets_tests.normalize.fixtures import fixtures

    found: dict[str, list[Any]] = {}
    for fixture in fixtures().values():
        data = fixture.data.removeprefix(b"\xef\xbb\xbf")
        if data[:2] == b"\x1f\x8b" or not data.strip() or mismatch(fixture.fmt, data[:4096]):
            continue  # compressed, damaged or other-format files: the byte-level fuzzer makes those
        if data.startswith(b"window.YTD."):
            kind = data[len(b"window.YTD."):].split(b".", 1)[0].decode()
            items = _json_or_none(data.split(b"=", 1)[1])
            name = "x-archive" if kind == "tweets" else f"x-archive:{kind}"
        elif fixture.fmt == "telegram-export":
            items, name = (_json_or_none(data) or {}).get("messages"), fixture.fmt
        elif fixture.fmt == "play-csv":  # rows after the header (the seed set writes its own header)
            text = data.decode("utf-16" if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else "utf-8")
            found.setdefault(fixture.fmt, []).extend(list(csv.reader(io.StringIO(text)))[1:])
            continue
        else:
            items, name = [_json_or_none(line) for line in data.splitlines() if line.strip()], fixture.fmt
        found.setdefault(name, []).extend(i for i in items or () if isinstance(i, dict))
    return found


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


@cache
def seeds() -> dict[str, FormatSeeds]:
    """Seed set name → seeds; every format of ``crawl_assets.normalize.FORMATS`` has at least one set (the
    set named after it), and the real-world shapes of issues 14 and 29 are in them too."""
    pages = tuple(orjson.loads(line) for line in _sample("x_v2_recording.jsonl").splitlines() if line.strip())
    archive = orjson.loads(_sample("x_archive_tweets.js").split(b"=", 1)[1])
    export = orjson.loads(_sample("telegram_export/result.json"))["messages"]
    shapes = _real_world_shapes()
    found = {
        "telegram": FormatSeeds(_telethon_lines(), _lines, True),
        "telegram-export": FormatSeeds(tuple(export), _export, False),
        "telegram-web": FormatSeeds(_web_pages(), _lines, True),
        "x-v2": FormatSeeds(pages, _lines, True),
        "x-archive": FormatSeeds(tuple(archive), _archive, False),
        "play-csv": _play_csv(),
        **{fmt: FormatSeeds(_golden_pages(fmt, platform), _lines, True) for fmt, platform in golden_pages().items()},
    }
    out = {}
    for name, spec in found.items():
        out[name] = dataclasses.replace(spec, items=spec.items + tuple(shapes.get(name, ())), fmt=name)
    for name in set(shapes) - set(found):  # archive files of other kinds (deleted-tweets.js, like.js)
        kind = name.split(":", 1)[1]
        out[name] = FormatSeeds(tuple(shapes[name]), functools.partial(_archive_kind, kind), False, fmt="x-archive")
    return out


def _archive_kind(kind: str, items: list[Any]) -> bytes:
    return f"window.YTD.{kind}.part0 = ".encode() + json_bytes(items)
