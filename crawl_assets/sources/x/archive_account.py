"""The owner of an X account archive: ``data/account.js`` beside ``data/tweets.js`` names the account
(``window.YTD.account.part0 = [{"account": {"accountId": "…", …}}]``). Its id becomes the ``author_id`` of
the archive's tweets, so ``crawl-assets erase --author`` reaches them. Read the same way for an
``export_file`` source (confined to the tenant's import root) and for ``crawl-assets normalize`` (beside the
file named)."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import orjson

from crawl_assets.core.files import FileRefused, read_regular
from crawl_assets.normalize.context import ACCOUNT_ID
from crawl_assets.registry import SourceEntry

ACCOUNT_FILE = "account.js"
MAX_BYTES = 1 << 20  # account.js is a few hundred bytes


def archive_account_id(entry: SourceEntry) -> str | None:
    """The account id in the ``account.js`` next to the entry's export file (opened with the same
    confinement as the export itself), or None when there is none or it does not name one."""
    from crawl_assets.sdk.exports import open_export

    sibling = entry.model_copy(update={"identifier": str(PurePosixPath(entry.identifier).parent / ACCOUNT_FILE)})
    try:
        with os.fdopen(open_export(sibling), "rb") as fh:
            return account_id_in(fh.read(MAX_BYTES + 1))
    except (OSError, ValueError):  # missing, refused (a link, outside the root) or unreadable: no owner known
        return None


def archive_account_beside(path: str) -> str | None:
    """The account id in the ``account.js`` beside the archive file at ``path`` (``crawl-assets normalize``),
    or None when there is none or it does not name one."""
    try:
        return account_id_in(read_regular(Path(path).parent / ACCOUNT_FILE, MAX_BYTES, follow_links=True))
    except (OSError, FileRefused):  # missing, a FIFO or device, or too large: no owner known
        return None


def account_id_in(data: bytes) -> str | None:
    """The ``accountId`` an ``account.js`` (at most ``MAX_BYTES``) names, else None."""
    if len(data) > MAX_BYTES:
        return None
    _, sep, body = data.partition(b"=")
    try:
        items = orjson.loads(body if sep else data)
    except orjson.JSONDecodeError:
        return None
    for item in items if isinstance(items, list) else []:
        account = item.get("account") if isinstance(item, dict) else None
        value = str(account.get("accountId", "")) if isinstance(account, dict) else ""
        if ACCOUNT_ID.fullmatch(value):
            return value
    return None
