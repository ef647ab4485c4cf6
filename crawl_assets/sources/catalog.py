"""The installed source types. Adding one = a folder with a ``plugin.py`` + one line here
(docs/ADDING_A_SOURCE.md)."""

from __future__ import annotations

from functools import cache

from crawl_assets.sources.plugin import SourcePlugin, resolve

PLUGIN_MODULES: tuple[str, ...] = (
    "crawl_assets.sources.telegram.plugin",
    "crawl_assets.sources.x.plugin",
    "crawl_assets.sources.discourse.plugin",
    "crawl_assets.sources.play.plugin",
    "crawl_assets.sources.intercom.plugin",
    "crawl_assets.sources.hackernews.plugin",
)


@cache
def plugins() -> dict[str, SourcePlugin]:
    """Platform name → plugin, in declaration order."""
    out: dict[str, SourcePlugin] = {}
    for module in PLUGIN_MODULES:
        plugin = resolve(f"{module}:PLUGIN")
        if plugin.platform in out:
            raise ValueError(f"two plugins declare platform {plugin.platform!r}")
        out[plugin.platform] = plugin
    return out


def platforms() -> tuple[str, ...]:
    return tuple(plugins())


def format_specs() -> dict[str, str]:
    """Every normalizer format → ``"module:function"``; a format belongs to exactly one plugin."""
    specs: dict[str, str] = {}
    for plugin in plugins().values():
        for fmt, spec in plugin.formats.items():
            if fmt in specs:
                raise ValueError(f"format {fmt!r} is declared by two plugins")
            specs[fmt] = spec
    return specs


IDENTIFIER_HINTS = {
    "channel": "<channel username>", "group": "<group username or id>", "account_timeline": "<account handle>",
    "search_query": "'<query>'", "forum": "<forum URL>", "app": "<package name>", "workspace": "<workspace id>",
    "export_file": "<export file> --option format=<format>",
}


def register_hint(platform: str) -> str:
    """The command that registers a first source of ``platform`` (its first live kind, else an export)."""
    kind = plugins()[platform].allowed_kinds()[0]
    return f"crawl-assets sources add --platform {platform} --kind {kind} --identifier {IDENTIFIER_HINTS[kind]} --name <name>"
