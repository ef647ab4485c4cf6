"""One real node (moved to ``crawl_assets.index.local_node.node``: ``crawl-assets es local`` starts one too)."""

from crawl_assets.index.local_node.node import *  # noqa: F401,F403
