"""A record key as a 64-bit number, for tallies of many keys held as arrays (8 bytes a key, not a Python
string each): the pipeline's ``KeyTally`` and an export sync's counts. Any string, lone surrogates included."""

from __future__ import annotations

import hashlib

_blake2b = hashlib.blake2b


def key_hash(key: str) -> int:
    return int.from_bytes(_blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")
