"""Which sources to sync now: the pure scheduling policy (the registry it reads: ``registry.store.registry_view``;
the per-source lock: ``crawl_assets.locks.shared.source_lock``)."""
