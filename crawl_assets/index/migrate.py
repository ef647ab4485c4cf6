"""Bring existing indices to the shipped template: what can change in place does; the rest is named.

A template only shapes indices created after it. ``es setup`` therefore compares every existing index
with its family's template: fields the index lacks or maps differently are sent with put-mapping, one
field at a time, and the cluster itself decides what is compatible (new fields and sub-fields,
``ignore_above``, flattened ``depth_limit``... are; a new type or analyzer is not). Dynamic settings
(``refresh_interval``, the field limit) are updated. What the cluster refuses, fields or sub-fields the
index maps and the template no longer does (a mapping never drops a field in place), and analysis settings
that differ (they change only on a closed index), are reported with the reason: ``crawl-assets es
reindex`` moves such an index to a new generation without downtime (``reindex.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from elasticsearch import BadRequestError, Elasticsearch, NotFoundError

from crawl_assets.index.documents import LEMMA_FIELD, LEMMA_META
from crawl_assets.persian.lemma import LEMMA_VERSION

DYNAMIC_SETTINGS = ("refresh_interval", "mapping.total_fields.limit")


@dataclass(frozen=True)
class Incompatible:
    index: str
    family: str
    tenant: str
    what: str  # a field path, or "analysis" / "settings"
    reason: str

    def __str__(self) -> str:
        return f"{self.index}: {self.what}: {self.reason}"


@dataclass
class MigrationReport:
    updated: list[str] = field(default_factory=list)  # "index: field, field"
    needs_reindex: list[Incompatible] = field(default_factory=list)
    in_progress: list[str] = field(default_factory=list)  # logical names with an unfinished reindex


def _same(want: Any, have: Any) -> bool:
    """Whether the index's definition has every parameter the template sets (extra defaults are fine)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(_same(v, have.get(k)) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(have, list) and len(want) == len(have) and all(_same(a, b) for a, b in zip(want, have))
    return str(want).lower() == str(have).lower()


def with_defaults(have: dict[str, Any], defaults: dict[str, dict[str, Any]], prefix: str = "") -> dict[str, Any]:
    """The index's mapping with every parameter it leaves out at its default filled in (``defaults``:
    full field name -> parameters, from the field mapping API with ``include_defaults``)."""
    out: dict[str, Any] = {}
    for name, current in have.items():
        path = prefix + name
        if "properties" in current:
            out[name] = {"type": "object", **current,
                         "properties": with_defaults(current["properties"], defaults, path + ".")}
            continue
        merged = {**defaults.get(path, {}), **current}
        if "fields" in current:
            merged["fields"] = {sub: {**defaults.get(f"{path}.{sub}", {}), **d} for sub, d in current["fields"].items()}
        out[name] = merged
    return out


def _field_defaults(client: Elasticsearch, index: str) -> dict[str, dict[str, Any]]:
    """The defaults of the index's mapped fields. An index with no field mapped yet answers 404 with ``{}``
    (seen when two machines set up a tenant's indices at once): no defaults then."""
    try:
        found = client.indices.get_field_mapping(index=index, fields="*", include_defaults=True)[index]["mappings"]
    except NotFoundError:
        return {}
    return {name: next(iter(entry["mapping"].values()), {}) for name, entry in found.items()}


def changed_fields(have: dict[str, Any], want: dict[str, Any],
                   prefix: str = "") -> list[tuple[str, str, dict[str, Any]]]:
    """(name, field path, definition to put) for each field or sub-field the template maps and the index
    lacks or maps otherwise; objects are compared field by field, multi-fields sub-field by sub-field
    (so one refused sub-field does not hold back the others)."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    for name, definition in want.items():
        path, current = prefix + name, have.get(name)
        if current is not None and "properties" in definition and "properties" in current:
            own = {k: v for k, v in definition.items() if k != "properties"}
            if not _same(own, current):
                out.append((path, path, {**own, "properties": {}}))
            out += changed_fields(current["properties"], definition["properties"], path + ".")
            continue
        base = {k: v for k, v in definition.items() if k != "fields"}
        if current is None or not _same(base, current):
            out.append((path, path, definition))
            continue
        for sub, sub_def in (definition.get("fields") or {}).items():
            if not _same(sub_def, (current.get("fields") or {}).get(sub)):
                out.append((f"{path}.{sub}", path, {**base, "fields": {sub: sub_def}}))
    return out


def dropped_fields(have: dict[str, Any], want: dict[str, Any], prefix: str = "") -> list[str]:
    """Paths of the fields and sub-fields the index maps that the template no longer maps (each one costs
    every write its indexing; only a new generation drops it)."""
    out: list[str] = []
    for name, current in have.items():
        path, definition = prefix + name, want.get(name)
        if definition is None:
            out.append(path)
            continue
        if "properties" in current and "properties" in definition:
            out += dropped_fields(current["properties"], definition["properties"], path + ".")
        kept = definition.get("fields") or {}
        out += [f"{path}.{sub}" for sub in (current.get("fields") or {}) if sub not in kept]
    return out


def _nest(path: str, definition: dict[str, Any]) -> dict[str, Any]:
    *parents, leaf = path.split(".")
    body: dict[str, Any] = {leaf: definition}
    for parent in reversed(parents):
        body = {parent: {"properties": body}}
    return body


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: [str(v) for v in value] if isinstance(value, list) else str(value).lower()}


def _reason(exc: BadRequestError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    return str((body.get("error") or {}).get("reason") or exc.message)


def migrate_index(client: Elasticsearch, index: str, family: str, tenant: str, template: dict[str, Any],
                  report: MigrationReport, *, dry_run: bool = False) -> None:
    """Compare one physical index with its family's ``template`` (the ``template`` part of the shipped body,
    given by ``indices.setup_indices``); apply what is compatible (unless ``dry_run``), record the rest in ``report``."""
    wanted = template["mappings"]["properties"]
    mapping = client.indices.get_mapping(index=index)[index]["mappings"]
    mapped = mapping.get("properties", {})
    current = with_defaults(mapped, _field_defaults(client, index))
    if not _same(template["mappings"].get("_source", {}), mapping.get("_source", {})):
        # the records' text_lemma is indexed, never stored: written before, a document has none until reindexed
        report.needs_reindex.append(Incompatible(index, family, tenant, "_source",
                                                 "_source settings differ (fields kept out of _source, such as "
                                                 "text_lemma, are filled in by a reindex)"))
    if family == "records":
        made_by = (mapping.get("_meta") or {}).get(LEMMA_META)
        if made_by != LEMMA_VERSION:
            report.needs_reindex.append(Incompatible(
                index, family, tenant, LEMMA_FIELD, f"made by lemmatizer {made_by or 'of before 2026.12.4'}, this one is "
                f"{LEMMA_VERSION}: a reindex recomputes it"))
    applied = []
    report.needs_reindex += [Incompatible(index, family, tenant, path, "mapped by the index, no longer by the template")
                             for path in dropped_fields(mapped, wanted)]
    for name, path, definition in changed_fields(current, wanted):
        if dry_run:
            applied.append(name)
            continue
        try:
            client.indices.put_mapping(index=index, properties=_nest(path, definition))
            applied.append(name)
        except BadRequestError as exc:
            report.needs_reindex.append(Incompatible(index, family, tenant, name, _reason(exc)))
    settings = client.indices.get_settings(index=index)[index]["settings"]["index"]
    want_analysis, have_analysis = _flat(template["settings"].get("analysis", {})), _flat(settings.get("analysis", {}))
    differ = sorted({k.rsplit(".", 1)[0] for k, v in want_analysis.items() if have_analysis.get(k) != v})
    if differ:
        report.needs_reindex.append(Incompatible(index, family, tenant, "analysis",
                                                 "analysis settings differ: " + ", ".join(differ)))
    want_index, have_index = _flat(template["settings"].get("index", {})), _flat(settings)
    dynamic = {k: want_index[k] for k in DYNAMIC_SETTINGS if k in want_index and have_index.get(k) != want_index[k]}
    if dynamic:
        if not dry_run:
            client.indices.put_settings(index=index, settings={"index": dynamic})
        applied += [f"settings.{k}" for k in dynamic]
    if str(want_index.get("number_of_shards", "1")) != str(have_index.get("number_of_shards", "1")):
        report.needs_reindex.append(Incompatible(index, family, tenant, "settings", "number_of_shards differs"))
    if applied:
        report.updated.append(f"{index}: {', '.join(applied)}")
