"""The erasure log proves an erasure without telling the lake's readers whom it was about (issue 30, item 11:
its salted SHA-256 kept the salt beside the hash, so trying every id found the subject at once). The
subject is an HMAC under a key kept outside the lake, owner-only."""

from __future__ import annotations

import gzip
import hashlib
import hmac
import os
import re
import stat
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from crawl_assets import settings
from crawl_assets.cli.main import cli
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch

SOURCE = "acme.telegram.group"


def _message(mid: int, text: str, sender: int) -> bytes:
    return orjson.dumps({"_": "Message", "id": mid, "peer_id": {"_": "PeerChannel", "channel_id": 777},
                         "from_id": {"_": "PeerUser", "user_id": sender}, "date": "2026-01-05T10:00:00+00:00",
                         "message": text, "entities": []})


@pytest.fixture
def lake(dagster_home) -> Lake:
    lake = Lake(settings.lake_root())
    batch = lake.write_raw_batch(tenant="acme", platform="telegram", source=SOURCE, fmt="telegram", method="api",
                                 batch_id="20260105T100000000000Z-r1-0000", run_id="r1",
                                 lines=[_message(1, "kept", 501), _message(2, "erase me", 77)])
    normalize_batch(lake, batch, lake.table_part(TABLE, "acme", "telegram", SOURCE, batch.manifest.batch_id))
    return lake


def _lake_strings(lake: Lake) -> set[str]:
    """Every string an attacker holding the lake can read (JSON values and long tokens of every file)."""
    found: set[str] = set()
    for path in lake.fs.find(lake.path("")):
        data = lake.fs.cat_file(path)
        data = gzip.decompress(data) if path.endswith(".gz") else data
        found.update(m.decode() for m in re.findall(rb"[0-9A-Za-z+/=_-]{32,}", data))  # key-sized tokens
    def strings(value) -> list[str]:
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        return [value] if isinstance(value, str) else []

    for entry in lake.read_erasure_log("acme"):
        found.update(strings(entry))  # a salt stored beside the hash is one of these
    return found


def _confirms(secret: str, candidate: str, digests: set[str]) -> bool:
    """Whether ``secret`` (a salt or key guessed from the lake) turns ``candidate`` into a logged digest."""
    tries = [hashlib.sha256(f"{secret}:{candidate}".encode()).hexdigest(), hashlib.sha256(candidate.encode()).hexdigest()]
    for message in (candidate, f"acme\n{candidate}", f"acme:{candidate}"):
        tries.append(hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest())
    return bool(set(tries) & digests)


def test_the_lake_alone_cannot_confirm_whom_an_erasure_was_about(lake):
    result = CliRunner().invoke(cli, ["erase", "--tenant", "acme", "--author", "telegram:77"])
    assert result.exit_code == 0, result.output
    [entry] = lake.read_erasure_log("acme")
    digests = set(re.findall(r"[0-9a-f]{64}", orjson.dumps(entry).decode()))
    assert digests, "the entry keeps a trace of its subject"
    secrets_in_lake = _lake_strings(lake)
    for user in range(1000):  # every id an attacker would try, as the log may spell it
        for candidate in (str(user), f"telegram:{user}"):
            assert not any(_confirms(s, candidate, digests) for s in secrets_in_lake), \
                f"the lake alone confirms that {candidate!r} was erased"

    key_file = settings.erasure_key_file()
    assert not key_file.resolve().is_relative_to(Path(lake.root).resolve())
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert key_file.read_text().strip() not in "\n".join(secrets_in_lake)

    from crawl_assets.erasure.log import entries_about, erasure_key

    key = erasure_key(lake)  # the key's holder can still confirm it
    assert entries_about(lake, "acme", "telegram:77", key) == [entry]
    assert entries_about(lake, "acme", "telegram:501", key) == []


def _texts(lake: Lake) -> set[str]:
    return {r["text"] for _, t in lake.read_parts(TABLE, "acme", "telegram", SOURCE) for r in arrow_to_records(t)}


def test_a_key_readable_by_others_or_inside_the_lake_stops_the_erasure_before_anything_goes(lake, monkeypatch):
    key_file = settings.erasure_key_file()
    key_file.write_text("k" * 64 + "\n")
    os.chmod(key_file, 0o644)
    result = CliRunner().invoke(cli, ["erase", "--tenant", "acme", "--author", "telegram:77"])
    assert result.exit_code == 1 and "readable by other users" in result.output, result.output
    assert _texts(lake) == {"kept", "erase me"} and not lake.read_erasure_log("acme")

    inside = Path(lake.root) / "erasure.key"
    monkeypatch.setenv("CRAWL_ERASURE_KEY_FILE", str(inside))
    result = CliRunner().invoke(cli, ["erase", "--tenant", "acme", "--author", "telegram:77"])
    assert result.exit_code == 1 and "inside the lake" in result.output, result.output
    assert _texts(lake) == {"kept", "erase me"} and not lake.read_erasure_log("acme") and not inside.exists()


def test_a_shared_key_secret_makes_no_key_file_and_is_never_written_to_the_lake(lake, monkeypatch):
    """Machines of one deployment share the key as a secret (``CRAWL_ERASURE_KEY``): no file is made or read,
    the holder of the secret confirms the erasure, the lake never holds it, and a short secret stops the erasure."""
    monkeypatch.setenv("CRAWL_ERASURE_KEY", "short")
    result = CliRunner().invoke(cli, ["erase", "--tenant", "acme", "--author", "telegram:77"])
    assert result.exit_code == 1 and "CRAWL_ERASURE_KEY holds fewer than" in result.output, result.output
    assert _texts(lake) == {"kept", "erase me"} and not lake.read_erasure_log("acme")

    shared = "the deployment's shared erasure secret, 32+ chars"
    monkeypatch.setenv("CRAWL_ERASURE_KEY", shared)
    result = CliRunner().invoke(cli, ["erase", "--tenant", "acme", "--author", "telegram:77"])
    assert result.exit_code == 0, result.output
    assert not settings.erasure_key_file().exists(), "no key file on this machine"
    assert shared not in "\n".join(_lake_strings(lake)) and _texts(lake) == {"kept"}

    from crawl_assets.erasure.log import entries_about

    [entry] = lake.read_erasure_log("acme")
    assert entries_about(lake, "acme", "telegram:77", shared.encode()) == [entry]
