"""The work itself, as plain functions over the lake and the index: normalize raw batches, rebuild
relations, find what to index; runnable and testable without Dagster (the assets in ``crawl_assets.orchestration.assets``
call them, and so do erasure and retention)."""
