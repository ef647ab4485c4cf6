"""The source types: what one declares (its ``SourceSpec``) and the installed ones (the catalog).

A spec is data. It names code by ``"module:attribute"`` strings, resolved when first used, so the registry,
the schema, the CLI and the catalog read every spec without importing HTTP clients, Telethon, Dagster or
pandas (a test checks it in a fresh process). docs/ADDING_A_SOURCE.md walks through writing one.

A source type is a folder ``crawl_assets/sources/<platform>/`` with a ``spec.py`` and one line in
``pyproject.toml``::

    [project.entry-points."crawl_assets.sources"]
    hackernews = "crawl_assets.sources.hackernews.spec:SPEC"

Entry points are read from the installed metadata: after adding one, run ``pip install -e .`` again.
Platforms are listed by name (entry point order is not defined). The catalog is read once per process.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from crawl_assets.core.options import SourceOptions

EXPORT_FILE = "export_file"  # the kind of every source that imports a file the user already has
EXPORT_COLLECTOR = "crawl_assets.sources.export_file.collect:collect_export"  # that source type's collector


def resolve(target: str) -> Any:
    """``"package.module:attr.sub"`` → the object."""
    module, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class FormatSpec:
    """One raw format a source type writes or imports, and how ``crawl-assets normalize`` reads it.

    - ``normalizer``: ``"module:function"`` (the ``Normalizer`` protocol of ``crawl_assets.normalize.reading``);
    - ``description``: what a file of this format is, for "this looks like …, not …" refusals;
    - ``numbered_lines``: one self-contained item (or API page) per line, so an early end names its line; such
      a format's lines are capped (``normalize.reading.line_cap``: a longer line is rejected unread);
    - ``splittable``: lines are independent, so ``normalize --jobs N`` may split a file across processes;
    - ``envelope_field``: for the crawl envelopes of REST answers, the ``crawl`` field only this format's
      lines carry (how a file's format is recognised);
    - ``export_owner``: for an export file of this format, the account it belongs to (stored with the
      batch as the ``account_id`` normalization option when the source does not set one);
      ``owner_beside``: the same for a file named by a path (``crawl-assets normalize``), ``"module:function(path)
      -> account id | None"``;
    - ``sniff``: ``"module:function(head, first_line) -> bool"``: whether a file's first bytes (and its first
      line parsed, when complete) unmistakably are this format; ``sniff_rank``: when several formats
      recognise one file, the lowest rank wins.
    """

    name: str
    normalizer: str
    description: str
    numbered_lines: bool = False
    splittable: bool = False
    envelope_field: str = ""
    sniff: str = ""
    sniff_rank: int = 20
    export_owner: str = ""  # "module:function(entry) -> account id | None": whose export file this is
    owner_beside: str = ""  # "module:function(path) -> account id | None": the same, for the CLI's files


@dataclass(frozen=True)
class WebhookSpec:
    """How the platform signs, names and dates the deliveries it pushes (``crawl-assets webhooks serve``).

    Only what the signature covers can be trusted against replays: a signed id field identifies a delivery
    (else the hash of its body), a signed time field bounds its age (else there is no time to check).
    """

    header: str  # lower-case request header carrying the signature
    prefix: str  # "sha1=" / "sha256="
    digest: str  # hashlib name
    secret: str = "WEBHOOK_SECRET"  # per-tenant secret variable: CRAWL_<PLATFORM>_<secret>[__TENANT[__NAME]]
    topic_header: str = ""
    delivery_header: str = ""
    signed_id_field: str = ""
    signed_time_field: str = ""
    ignored_topics: frozenset[str] = frozenset({"ping"})


@dataclass(frozen=True)
class Sample:
    """A bundled sample export ``crawl-assets demo`` registers (``path`` under ``crawl_assets/sample_data``)."""

    name: str
    format: str
    path: str


@dataclass(frozen=True)
class PullSpec:
    """A pull-based REST source, wired without code of its own: the shared collector runs ``sync`` with a
    client from ``client`` and stores raw batches of ``raw_format`` (``crawl_assets.sdk.sync``); the shared
    resource (``crawl_assets.sdk.rest_resource``, key = the platform) holds ``CRAWL_<PLATFORM>_BASE_URL``,
    the per-tenant secrets ``CRAWL_<PLATFORM>_<secret>[__TENANT[__NAME]]``, retries and the run budget.

    - ``sync``: ``"module:function"``, ``sync(client, entry, state, store, budget) -> SyncResult``;
    - ``raw_format``: the format of the raw batches it writes (one of the spec's formats);
    - ``client``: ``"module:function"``, ``open_client(resource, entry) -> client`` (an ``HttpClient``); its
      ``http`` is closed after the sync;
    - ``secret``: the credential's variable suffix ("" = the API needs none).

    A platform that still has a resource of its own (``SourceSpec.resource``) builds its client there.
    """

    sync: str
    raw_format: str
    client: str = ""
    secret: str = ""


@dataclass(frozen=True)
class ReleaseTerms:
    """What the platform's terms let a dataset release carry (``crawl_assets.release``): full records, or only
    their ids (``ids_only``: recipients hydrate them under their own agreement), with a note for the publisher."""

    ids_only: bool
    note: str


@dataclass(frozen=True)
class DiscoverySpec:
    """How a platform's records name other sources it could collect (``crawl-assets discover``): candidates a
    person approves into the registry, never collected before that.

    - ``references``: ``"module:function(row) -> iterable of (candidate, label, way)"``: the chats one record names
      (``row``: a record's ``key``, ``created_at``, ``urls``, ``mentions`` and ``metadata`` as JSON text); ``way``
      says how (``forward``, ``link``, ``mention``), ``self`` is the record's own chat;
    - ``registered``: ``"module:function(identifier) -> candidate | None"``: the candidate a registry identifier is;
    - ``identifier``: ``"module:function(candidate) -> identifier | None"``: the identifier an approval registers;
    - ``kinds``: the kinds an approved candidate may be registered as (the first is the default).
    """

    references: str
    registered: str
    identifier: str
    kinds: tuple[str, ...]


@dataclass(frozen=True)
class SourceSpec:
    """One source type (platform).

    Names that Dagster keeps history under derive from ``platform`` and ``raw_asset`` (the asset keys
    ``[platform, raw_asset]`` and ``[platform, normalized_records|relation_edges|search_index]``, partitions
    ``{platform}_sources``, jobs ``{platform}_sync…``): never rename them once sources exist.
    """

    platform: str  # slug: asset key prefix, partitions "<platform>_sources", variables "CRAWL_<PLATFORM>_*"
    description: str
    raw_asset: str  # the raw asset's name, e.g. "hackernews_items_raw"
    raw_description: str
    kinds: tuple[str, ...]  # kinds it syncs live; EXPORT_FILE is allowed when export_formats is not empty
    formats: tuple[FormatSpec, ...]
    export_formats: tuple[str, ...] = ()  # formats an export file may hold; the first is the default
    identifier_hints: Mapping[str, str] = field(default_factory=dict)  # kind -> what --identifier takes
    persons: str = ""  # "module:attr" of its PersonIds (where its payloads name people; erasure uses it)
    options_model: type[SourceOptions] = SourceOptions  # the registry options of its live kinds (default: none)
    pull: PullSpec | None = None  # a pull-based REST source: collector and resource are the shared ones
    live: str = ""  # "module:function": a live collector of its own (``crawl_assets.sdk.sync.LiveCollector``, plain)
    resource: str = ""  # "module:factory" of a resource of its own, keyed by the platform (temporary)
    webhook: WebhookSpec | None = None
    max_runs_per_credential: int = 0  # runs of one credential at a time (0: no limit)
    # "module:function", (entry, environ) -> the variables a live source of ``entry`` needs that are unset;
    # "": a pull spec's ``secret`` is needed as CRAWL_<PLATFORM>_<secret>[__TENANT[__NAME]], else nothing
    credentials: str = ""
    edit_histories: bool = False  # records carry the ids of every version of a post (metadata edit_history_tweet_ids)
    snowflake_author_ids: bool = False  # author ids are Snowflake ids: they carry the account's creation time
    samples: tuple[Sample, ...] = ()
    release_terms: ReleaseTerms | None = None  # None: released as ids only, with no note
    discovery: DiscoverySpec | None = None  # the chats its records name become candidates (crawl-assets discover)

    def has_resource(self) -> bool:
        return bool(self.resource or self.pull)

    def allowed_kinds(self) -> tuple[str, ...]:
        return self.kinds + ((EXPORT_FILE,) if self.export_formats else ())

    def register_hint(self) -> str:
        """The command that registers a first source of this platform (its first live kind, else an export)."""
        kind = self.allowed_kinds()[0]
        hint = self.identifier_hints.get(kind) or (
            "<export file> --option format=<format>" if kind == EXPORT_FILE else "<identifier>")
        return (f"crawl-assets sources add --platform {self.platform} --kind {kind} --identifier {hint} "
                "--name <name>")


# -- the installed source types ---------------------------------------------------------------------------
GROUP = "crawl_assets.sources"


class CatalogError(ValueError):
    """An entry point that is not a valid source spec, or two specs claiming one platform or format."""


@dataclass(frozen=True)
class Catalog:
    specs: Mapping[str, SourceSpec]  # platform -> spec, by name

    @classmethod
    def of(cls, specs: Iterable[SourceSpec]) -> Catalog:
        by_platform: dict[str, SourceSpec] = {}
        formats: dict[str, str] = {}
        for spec in sorted(specs, key=lambda s: s.platform):
            if not isinstance(spec, SourceSpec):
                raise CatalogError(f"{spec!r} is not a SourceSpec")
            if spec.platform in by_platform:
                raise CatalogError(f"two source specs declare platform {spec.platform!r}")
            for fmt in spec.formats:
                if fmt.name in formats:
                    raise CatalogError(f"format {fmt.name!r} is declared by {formats[fmt.name]} and {spec.platform}")
                formats[fmt.name] = spec.platform
            unknown = set(spec.export_formats) - {f.name for f in spec.formats}
            if unknown:
                raise CatalogError(f"{spec.platform}: export formats {sorted(unknown)} are not among its formats")
            by_platform[spec.platform] = spec
        return cls(by_platform)

    def platforms(self) -> tuple[str, ...]:
        return tuple(self.specs)

    def spec(self, platform: str) -> SourceSpec:
        return self.specs[platform]

    def formats(self) -> dict[str, FormatSpec]:
        """Every format → its spec, platforms by name, each platform's formats in declaration order."""
        return {f.name: f for spec in self.specs.values() for f in spec.formats}

    def platform_of_format(self, fmt: str) -> str:
        return next(s.platform for s in self.specs.values() for f in s.formats if f.name == fmt)

    def kinds(self) -> tuple[str, ...]:
        """Every kind some platform accepts, in first-seen order."""
        seen = dict.fromkeys(k for spec in self.specs.values() for k in spec.allowed_kinds())
        return tuple(seen) if seen else (EXPORT_FILE,)


def load(group: str = GROUP) -> Catalog:
    """The specs installed under ``group``; a broken entry point fails loudly with its name."""
    specs = []
    for ep in entry_points(group=group):
        try:
            spec: Any = ep.load()
        except Exception as exc:  # noqa: BLE001 - name the entry point whatever went wrong
            raise CatalogError(f"source entry point {ep.name} = {ep.value} cannot be loaded: {exc}") from exc
        if not isinstance(spec, SourceSpec) or spec.platform != ep.name:
            raise CatalogError(f"source entry point {ep.name} = {ep.value} must be a SourceSpec of platform {ep.name!r}")
        specs.append(spec)
    return Catalog.of(specs)


@cache
def catalog() -> Catalog:
    """The installed catalog (read once per process)."""
    return load()


def platforms() -> tuple[str, ...]:
    return catalog().platforms()


def spec(platform: str) -> SourceSpec:
    return catalog().spec(platform)


def keeps_edit_histories(platform: str) -> bool:
    """Whether ``platform``'s records name every version of a post (``SourceSpec.edit_histories``); False for a
    platform not installed."""
    found = catalog().specs.get(platform)
    return bool(found and found.edit_histories)


@cache
def normalizer(fmt: str) -> Any:
    """The normalizer function of ``fmt`` (imported on first use)."""
    return resolve(catalog().formats()[fmt].normalizer)
