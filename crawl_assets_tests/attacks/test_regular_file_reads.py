"""Files someone else placed (a release package, an enrichment config, a key, an archive's account.js) are read
through one helper: a FIFO never blocks the reader, a link is followed only where allowed, sizes are bounded."""

from __future__ import annotations

import os
import threading

import pytest

from crawl_assets.core.files import FileRefused, open_regular, read_regular
from crawl_assets.release.verify import PackageInvalid, read_bounded


def _finishes(call) -> object:
    """``call()``'s outcome, failing the test instead of hanging when it blocks."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(call())
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(5)
    assert outcome, "the read blocked"
    return outcome[0]


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "manifest.json"
    os.mkfifo(fifo)
    outcome = _finishes(lambda: read_regular(fifo, 100))
    assert isinstance(outcome, FileRefused) and "not a regular file" in str(outcome)
    outcome = _finishes(lambda: read_bounded(fifo, 100))
    assert isinstance(outcome, PackageInvalid) and str(outcome) == "manifest.json: not a regular file"


def test_links_are_followed_only_when_allowed(tmp_path):
    target = tmp_path / "secret.txt"
    target.write_bytes(b"elsewhere")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with pytest.raises(OSError):
        read_regular(link, 100)
    assert read_regular(link, 100, follow_links=True) == b"elsewhere"


def test_a_file_over_the_limit_is_refused_and_one_at_the_limit_is_read(tmp_path):
    path = tmp_path / "data"
    path.write_bytes(b"x" * 10)
    assert read_regular(path, 10) == b"x" * 10
    with pytest.raises(FileRefused, match="larger than 9 bytes"):
        read_regular(path, 9)


def test_a_directory_is_no_regular_file(tmp_path):
    with pytest.raises((FileRefused, OSError)):
        open_regular(tmp_path).close()
