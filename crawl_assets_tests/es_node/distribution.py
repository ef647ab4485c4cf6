"""The server distribution (moved to ``crawl_assets.index.local_node.distribution``: ``crawl-assets es local`` uses it)."""

from crawl_assets.index.local_node.distribution import *  # noqa: F401,F403
from crawl_assets.index.local_node.distribution import _publish  # noqa: F401
