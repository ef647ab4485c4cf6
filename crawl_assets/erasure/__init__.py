"""Erasure: remove one author's (or one source's) data from a tenant's lake, derived tables and index.

Entry point: ``erase(lake, client, Selector(...))`` (``crawl-assets erase``). What was erased is
recorded in ``erasure/{tenant}/log.jsonl`` without the data itself.
"""

from crawl_assets.erasure.run import ErasureIncomplete, ErasureReport, Selector, erase

__all__ = ["ErasureIncomplete", "ErasureReport", "Selector", "erase"]
