"""Personal-data detection: where a record's text holds an e-mail, phone, card or IBAN-like number.

Output rows (one per record with at least one finding; a record without is simply absent) hold spans,
never the values: ``spans`` = ``[{field, type, start, end}]`` over ``text`` (as observed) and ``text_clean``,
in code points. With ``redacted_view`` (opt-in) a row also holds ``text_clean_redacted``: ``text_clean`` with
every span replaced by its type label, the view to share or index instead of the text. Erasure reports
count these types in what they erase (``crawl_assets.erasure``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import pyarrow as pa

from crawl_assets.enrich.base import CombineContext, Enricher, record_feature
from crawl_assets.enrich.columns import CONTEXT_COLUMNS, CONTEXT_FIELDS, context, record_documents
from crawl_assets.enrich.pii_rules import TYPES, Span, find_personal_data, redact

SPAN = pa.struct([pa.field("field", pa.string()), pa.field("type", pa.string()),
                  pa.field("start", pa.int32()), pa.field("end", pa.int32())])
FIELDS = ("text", "text_clean")


class PersonalData(Enricher):
    name: ClassVar[str] = "personal_data"
    version: ClassVar[str] = "1"
    columns: ClassVar[tuple[str, ...]] = (*CONTEXT_COLUMNS, *FIELDS)
    description: ClassVar[str] = ("E-mail addresses, phone numbers (Latin, Persian, Arabic-Indic digits), card "
                                  "(Luhn) and IBAN-like (mod-97) numbers in text, as typed spans.")

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {"types": list(TYPES), "redacted_view": False}

    def validate(self) -> None:
        unknown = set(self.params["types"]) - set(TYPES)
        if unknown or not self.params["types"]:
            raise ValueError(f"personal_data: 'types' must be a non-empty subset of {', '.join(TYPES)}")
        if not isinstance(self.params["redacted_view"], bool):
            raise ValueError("personal_data: 'redacted_view' must be true or false")

    @property
    def part_schema(self) -> pa.Schema:
        return self.stamped_schema([*CONTEXT_FIELDS, pa.field("types", pa.list_(pa.string())),
                                    pa.field("count", pa.int32()), pa.field("spans", pa.list_(SPAN)),
                                    pa.field("text_clean_redacted", pa.string())])

    def extract(self, records: pa.Table) -> pa.Table:
        wanted = frozenset(self.params["types"])
        redacted_view = self.params["redacted_view"]
        texts = {f: records.column(f).to_pylist() if f in records.column_names else [None] * records.num_rows
                 for f in FIELDS}
        hits: list[int] = []
        types, counts, spans, redacted = [], [], [], []
        for i, (text, clean) in enumerate(zip(texts["text"], texts["text_clean"])):
            found = [(f, s) for f, value in (("text", text), ("text_clean", clean))
                     for s in find_personal_data(value) if s.type in wanted]
            if not found:
                continue
            hits.append(i)
            types.append(sorted({s.type for _, s in found}))
            counts.append(len(found))
            spans.append([{"field": f, "type": s.type, "start": s.start, "end": s.end} for f, s in found])
            redacted.append(redact(clean, [s for f, s in found if f == "text_clean"]) if redacted_view and clean
                            else None)
        return self.table(self.part_schema, {**context(records, hits), "types": types, "count": counts,
                                             "spans": pa.array(spans, pa.list_(SPAN)),
                                             "text_clean_redacted": redacted})

    def documents(self, table: str, rows: pa.Table, context: CombineContext | None) -> Iterator[dict[str, Any]]:
        for ref, payload in record_documents(rows, ("types", "count", "spans", "text_clean_redacted")):
            redacted = payload.pop("text_clean_redacted")
            yield record_feature(self, ref, personal_data=payload,
                                 **({"text_clean_redacted": redacted} if redacted is not None else {}))


def redacted_record(record: dict[str, Any], clean_spans: list[Span]) -> dict[str, Any]:
    """The redacted view of one record: ``text`` left out, ``text_clean`` with ``clean_spans`` (spans over
    ``text_clean``) replaced by their type labels."""
    view = {k: v for k, v in record.items() if k != "text"}
    if clean_spans and view.get("text_clean"):
        view["text_clean"] = redact(view["text_clean"], clean_spans)
    return view


def clean_spans(spans: list[dict[str, Any]]) -> list[Span]:
    """The ``text_clean`` spans of a row's (or a feature document's) ``spans``."""
    return [Span(s["type"], s["start"], s["end"]) for s in spans if s["field"] == "text_clean"]


def redacted_records(records: list[dict[str, Any]], rows: pa.Table) -> list[dict[str, Any]]:
    """The redacted view of ``records`` from personal-data rows (``extract``'s output, any ``redacted_view``)."""
    spans = dict(zip(rows.column("key").to_pylist(), rows.column("spans").to_pylist()))
    return [redacted_record(r, clean_spans(spans.get(r.get("key")) or [])) for r in records]
