"""Where the API's signing secrets live (the one that signs cursors): never in the database the API reads, which
also holds the key hashes and which more people and processes can read than need this secret.

``CRAWL_API_CURSOR_SECRET`` (any text of 32 characters or more, the same for every worker on every machine)
when it is set; else a file of 32 random bytes made once, 0600 in a 0700 folder, under
``$DAGSTER_HOME/secrets/`` (every worker on this machine reads the same one; workers on several machines need
the variable).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from pathlib import Path

from crawl_assets import settings
from crawl_assets.core.private import make_dirs, open_new

MIN_CHARS = 32


def secret_path(name: str) -> Path:
    return settings.dagster_home() / "secrets" / f"api-{name}.key"


def signing_secret(name: str) -> bytes:
    """The secret ``name`` (32 bytes): from the environment, else from its owner-only file (made the first time)."""
    configured = settings.api_cursor_secret() if name == "cursor_secret" else ""
    if configured:
        if len(configured) < MIN_CHARS:
            raise ValueError(f"CRAWL_API_CURSOR_SECRET must be at least {MIN_CHARS} characters")
        return hashlib.sha256(configured.encode()).digest()
    path = secret_path(name)
    make_dirs(path.parent)
    try:
        with open_new(path, exclusive=True) as fh:  # of two workers starting at once, one writes it
            fh.write(secrets.token_hex(32).encode())
    except FileExistsError:
        pass
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)
    for _ in range(50):  # the writer may not have finished its 64 characters yet
        text = path.read_text().strip()
        if len(text) == 64:
            return bytes.fromhex(text)
        time.sleep(0.01)
    raise ValueError(f"{path}: not a signing secret (64 hexadecimal characters); remove it to have a new one made")
