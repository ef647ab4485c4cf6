"""Which sources to sync now: the pure scheduling policy and a fast read-only registry view (the per-source
lock: ``crawl_assets.locks.shared.source_lock``)."""
