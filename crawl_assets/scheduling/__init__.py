"""Which sources to sync now: the pure scheduling policy, a fast read-only registry view, per-source locks."""
