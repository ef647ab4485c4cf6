"""Edited X posts: every version has its own id, all versions are one post with a history.

X gives each version of an edited post a new id and lists them all, oldest first, in
``edit_history_tweet_ids`` (an archive in ``edit_info``; normalizers put both in
``metadata.edit_history_tweet_ids``). A version observed before it was edited lists only the ids up to
itself, so no single observation is enough: ``EditHistories`` gathers every history seen in a run, joins
the ones that share an id, and ``resolve`` then rewrites each version's record the same way whatever order
the versions came in:

- the latest version (the highest id) is the live record: ``metadata.edit_history_tweet_ids`` lists every
  version known, and ``edited_at`` is its own ``created_at`` (the time of the last edit);
- every earlier version keeps its text (what it said then) and gets ``metadata.superseded_by``, the live
  version's key, plus the full history.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

FIELD = "edit_history_tweet_ids"


def history_of(doc: dict[str, Any]) -> list[str] | None:
    """The version ids a record lists (more than one: an edited post), else None."""
    history = (doc.get("metadata") or {}).get(FIELD)
    if isinstance(history, list) and len(history) > 1 and all(isinstance(i, str) and i.isdigit() for i in history):
        return history
    return None


class EditHistories:
    """The edit histories of one run of one platform's records, joined into posts (sets of version ids)."""

    def __init__(self, platform: str) -> None:
        self.platform = platform
        self._post: dict[str, int] = {}  # version id -> post number
        self._versions: list[set[str]] = []

    def __bool__(self) -> bool:
        return bool(self._versions)

    def add(self, history: Iterable[str]) -> None:
        """One observed history (a list of version ids)."""
        ids = set(history)
        posts = {self._post[i] for i in ids if i in self._post}
        if posts:
            keep = min(posts)
            for other in posts - {keep}:
                ids |= self._versions[other]
                self._versions[other] = set()
        else:
            keep = len(self._versions)
            self._versions.append(set())
        self._versions[keep] |= ids
        for version in self._versions[keep]:
            self._post[version] = keep

    def merge(self, histories: Iterable[list[str]]) -> None:
        for history in histories:
            self.add(history)

    def keys(self) -> set[str]:
        """Record keys of every version known (the records ``resolve`` may change)."""
        return {f"{self.platform}:{version}" for version in self._post}

    def resolve(self, doc: dict[str, Any]) -> dict[str, Any] | None:
        """``doc`` rewritten as its post's live version or a superseded one; None when not an edited post's."""
        if doc.get("platform") != self.platform or doc.get("native_id") not in self._post:
            return None
        versions = sorted(self._versions[self._post[doc["native_id"]]], key=int)
        if len(versions) < 2:
            return None
        latest = versions[-1]
        metadata = {k: v for k, v in (doc.get("metadata") or {}).items() if k != "superseded_by"}
        metadata[FIELD] = versions
        doc = {**doc, "metadata": metadata}
        if doc["native_id"] == latest:
            doc["edited_at"] = doc["edited_at"] or doc["created_at"]
        else:
            metadata["superseded_by"] = f"{self.platform}:{latest}"
        return doc
