"""Where ``dagster.yaml`` files written before the ``instance`` package name the storage
(``module: crawl_assets.instance_storage``): the class lives in ``crawl_assets.instance.storage``."""

from crawl_assets.instance.storage import EnvSelectedStorage

__all__ = ["EnvSelectedStorage"]
