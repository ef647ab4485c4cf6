"""crawl_assets: partitioned Dagster assets that collect public or authorized social and feedback data."""

__version__ = "0.1.0"
