"""The erasure log: what was erased, when and how much, without the erased data.

One JSON line per erasure in the tenant's log (``Lake.append_erasure_log`` / ``Lake.read_erasure_log``). The
subject (author id or source key) is kept only as a salted SHA-256, so the log proves an erasure without
identifying whom it was about.
"""

from __future__ import annotations

import hashlib
import secrets


def subject_digest(subject: str) -> dict[str, str]:
    salt = secrets.token_hex(8)
    return {"salt": salt, "sha256": hashlib.sha256(f"{salt}:{subject}".encode()).hexdigest()}
