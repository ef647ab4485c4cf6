"""Documents as the bulk sink sends them: their ``_id``, their JSON, and the one ``bytes`` per document that
holds its action line and its source line.

One prepared document is one ``bytes``: its action line then its source line, each ending in "\\n", so a
bulk body is the plain join of a batch's lines. Bytes are atoms (the garbage collector never tracks them;
a dataclass per document once made the collector ~30% of the client's CPU time), and one object per
document is the least the producer can allocate. What a dead letter needs (``_id``, index, version,
source) is read back from the line by ``unpack``, which only a failed document pays for.
"""

from __future__ import annotations

from hashlib import blake2b as _blake2b
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import orjson

from crawl_assets.index.naming import RoutingError

ID_MAX_BYTES = 512
_ACTION_END = b',"version_type":"external_gte"}}\n'


def edge_id(doc: Mapping[str, Any]) -> str:
    """Deterministic ``_id`` of an edge from its type, src and dst (bounded length whatever the keys)."""
    kind, src, dst = doc.get("type"), doc.get("src"), doc.get("dst")
    if not kind or src is None or dst is None:
        raise RoutingError("an edge needs type, src and dst")
    return edge_key(str(kind), str(src), str(dst))


def edge_key(kind: str, src: str, dst: str) -> str:
    """``edge_id`` of an edge's parts, known to be present."""
    return kind + ":" + _blake2b((src + "\x1f" + dst).encode(), digest_size=16).hexdigest()


def document_id(doc: Mapping[str, Any], family: str) -> str:
    """``_id``: the record ``key``; an edge's deterministic id; an author's key (or platform:author_id)."""
    if family == "edges":
        return edge_id(doc)
    key = doc.get("key")
    if type(key) is str and 0 < len(key) <= ID_MAX_BYTES // 4:  # the common case: short enough in any encoding
        return key
    if not key and family == "authors" and doc.get("platform") and doc.get("author_id"):
        key = f"{doc['platform']}:{doc['author_id']}"
    if not key or not isinstance(key, str):
        raise RoutingError("field 'key' is missing or not a string")
    if len(key.encode()) > ID_MAX_BYTES:
        raise RoutingError(f"field 'key' is longer than {ID_MAX_BYTES} bytes")
    return key


def _json_default(value: Any) -> Any:
    """Values orjson does not know but that have one obvious JSON form (pandas/numpy scalars, Decimal)."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return value.item()
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(f"cannot serialize a {type(value).__name__} value")


def source_bytes(doc: Mapping[str, Any]) -> bytes:
    """The document's JSON, as indexed."""
    try:
        return orjson.dumps(doc)
    except TypeError:  # non-string keys, numpy/pandas values: slower options, so only when needed
        return orjson.dumps(doc, default=_json_default, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY)


def action_head(index: str) -> bytes:
    """The start of every action line into ``index`` (pre-serialized once per index)."""
    return b'{"index":{"_index":%s,"_id":' % orjson.dumps(index)


def prepared_line(head: bytes, doc_id: str, version: int, source: bytes) -> bytes:
    """One document's action and source lines as one ``bytes`` (one allocation: the source is copied once)."""
    return b"%s%s,\"version\":%d%s%s\n" % (head, orjson.dumps(doc_id), version, _ACTION_END, source)


def unpack(line: bytes) -> tuple[str, str, int, bytes]:
    """``(doc_id, index, version, source)`` of a prepared line (a JSON action line never holds a raw newline)."""
    cut = line.index(b"\n")
    action = orjson.loads(line[:cut])["index"]
    return action["_id"], action["_index"], action["version"], line[cut + 1:-1]
