"""The analysis plugin's build (moved to ``crawl_assets.index.local_node.analysis_plugin``)."""

from crawl_assets.index.local_node.analysis_plugin import *  # noqa: F401,F403
