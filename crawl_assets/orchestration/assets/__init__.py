"""Each platform's chain of assets (``chain``): raw → normalized_records → relation_edges → search_index."""

from crawl_assets.orchestration.assets.chain import derived_assets, derived_steps, raw_asset, raw_step

__all__ = ["derived_assets", "derived_steps", "raw_asset", "raw_step"]
