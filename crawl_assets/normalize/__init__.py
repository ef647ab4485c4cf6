"""Pure, source-independent normalization: formats, Persian text, language, dedupe, edges.

``get_normalizer`` and ``normalize_stream`` are loaded on first access: the per-platform
normalizers in ``crawl_assets.sources`` import this package's helpers, so an eager import would be circular.
"""

from typing import Any

from crawl_assets.normalize.build import SERVICE_MESSAGE, InputError, UnknownFormatError
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.dedupe import Deduper, dedupe_latest
from crawl_assets.normalize.lang import detect_lang
from crawl_assets.normalize.text import clean_text

_LAZY = {"get_normalizer", "normalize_stream", "normalize_documents", "Normalizer"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from crawl_assets.normalize import reading

        return getattr(reading, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "SERVICE_MESSAGE",
    "Deduper",
    "InputError",
    "NormalizeContext",
    "Normalizer",
    "UnknownFormatError",
    "clean_text",
    "dedupe_latest",
    "detect_lang",
    "get_normalizer",
    "normalize_documents",
    "normalize_stream",
]
