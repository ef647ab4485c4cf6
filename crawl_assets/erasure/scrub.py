"""Pure: remove the objects of erased items from one raw JSON item, whatever its format.

A raw line may hold several people's items (an X page holds many posts and their authors in
``includes``), so the line is kept and only the objects that belong to the erased items are cut out.
"""

from __future__ import annotations

from typing import Any

ID_FIELDS = ("id", "id_str", "author_id", "user_id", "from_id", "reviewId", "objectID")
DROP = object()


def _owned(node: dict[str, Any], ids: frozenset[str]) -> bool:
    for name in ID_FIELDS:
        value = node.get(name)
        if isinstance(value, dict):  # Telethon peers: {"_": "PeerUser", "user_id": 1}
            value = value.get("user_id", value.get("channel_id"))
        if value is not None and not isinstance(value, (dict, list)) and str(value) in ids:
            return True
    return False


def scrub(value: Any, ids: frozenset[str]) -> Any:
    """``value`` without every object (at any depth) whose id, author or sender is in ``ids``;
    ``DROP`` when the value itself is such an object."""
    if isinstance(value, dict):
        if _owned(value, ids):
            return DROP
        out = {}
        for k, v in value.items():
            kept = scrub(v, ids)
            if kept is not DROP:
                out[k] = kept
        return out
    if isinstance(value, list):
        return [kept for v in value if (kept := scrub(v, ids)) is not DROP]
    return value
