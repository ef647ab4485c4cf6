"""The keys a part is written with, kept as 64-bit hashes (8 bytes each, not a Python string per record), so
normalizing a batch of a million records does not hold a million keys: which keys came more than once (found
exactly, by reading the written part's key column back only when two hashes are equal) and whether a few
given keys are among them."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator

import numpy as np

from crawl_assets.normalize.key_hash import key_hash


class KeyTally:
    """Hashes of the keys seen, in bulk appends; ``repeated`` names the keys seen more than once."""

    def __init__(self) -> None:
        self._hashes = array("Q")

    def update(self, keys: Iterable[str]) -> None:
        self._hashes.extend(key_hash(k) for k in keys)

    def __len__(self) -> int:
        return len(self._hashes)

    def holds(self, keys: Iterable[str]) -> set[str]:
        """Those of ``keys`` seen (a 64-bit hash match: for the few keys an edit history names)."""
        keys = list(keys)
        if not keys or not self._hashes:
            return set()
        found = np.isin(np.array([key_hash(k) for k in keys], dtype=np.uint64), np.frombuffer(self._hashes, np.uint64))
        return {k for k, hit in zip(keys, found) if hit}

    def repeated(self, read_keys: Iterator[Iterable[str]]) -> list[str]:
        """The keys seen more than once, sorted. ``read_keys`` gives the keys again (the written part's key
        column, a batch at a time); it is read only when two hashes are equal, to name the keys exactly."""
        hashes = np.sort(np.frombuffer(self._hashes, np.uint64))
        twice = np.unique(hashes[1:][hashes[1:] == hashes[:-1]])
        if not len(twice):
            return []
        suspects = set(twice.tolist())
        counts: Counter[str] = Counter(k for keys in read_keys for k in keys if key_hash(k) in suspects)
        return sorted(k for k, n in counts.items() if n > 1)
