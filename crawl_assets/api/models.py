"""Response shapes, published in the OpenAPI schema (records are the normalized record of docs/SCHEMA.md)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

Record = dict[str, Any]


class SearchPage(BaseModel):
    records: list[Record]
    total: int = Field(description="Matches (exact up to 10,000; see total_exact)")
    total_exact: bool
    next: str | None = Field(description="Cursor of the next page (pass as `cursor` with the same parameters); "
                                         "null on the last page. Valid for 2 minutes after each page.")


class Version(BaseModel):
    key: str
    created_at: str | None
    text: str | None
    deleted: bool


class Tombstone(BaseModel):
    deleted: bool
    deleted_at: str | None
    bare: bool = Field(description="Only the deletion was observed (no earlier content)")
    unavailable: str | None = Field(description="Why X did not return the post (not_found, suspended, ...)")


class RecordDetail(BaseModel):
    record: Record
    versions: list[Version]
    live_version: str
    tombstone: Tombstone
    history_note: str | None


class ThreadItem(BaseModel):
    key: str
    depth: int
    parent: str | None
    missing: bool = Field(description="Referenced but not in the index (never collected, or not this tenant's)")
    record: Record | None


class ContextEntry(BaseModel):
    missing: bool
    record: Record | None


class Thread(BaseModel):
    conversation_id: str
    anchor: str
    items: list[ThreadItem]
    context: dict[str, ContextEntry] = Field(description="Quoted and reposted records, by key")
    truncated: bool


class TimeBucket(BaseModel):
    start: str
    count: int
    jalali: str | None = Field(default=None, description="The bucket's Jalali name (calendar=jalali): 1403, "
                                                            "1403-Q2, 1403-07, 1403-07-15, 1403-07-15T10:00")


class Timeline(BaseModel):
    interval: str
    time_zone: str
    calendar: str = "gregorian"
    buckets: list[TimeBucket]


class Form(BaseModel):
    form: str
    count: int


class TopBucket(BaseModel):
    value: str
    count: int
    handle: str | None = None
    platform: str | None = None
    lemma: str | None = Field(default=None, description="lemmas=true: the lemma the forms share (value: the most "
                                                        "used form)")
    forms: list[Form] | None = Field(default=None, description="lemmas=true: the surface forms counted under this "
                                                               "lemma, most used first")


class Top(BaseModel):
    field: str
    buckets: list[TopBucket]
    other: int = Field(description="Records whose value is not among the buckets")
    missing: int = Field(description="Records without a value")


class Counts(BaseModel):
    records: int
    live: int
    deleted: int
    edited: int
    superseded: int


class TrendWindow(BaseModel):
    start: str
    end: str
    records: int
    jalali: list[str] | None = Field(default=None, description="calendar=jalali: start and end in the Jalali "
                                                              "calendar and tz (1403-02-12T09:30)")


class TrendItem(BaseModel):
    item: str
    count: int
    baseline_counts: list[int]
    baseline_mean: float
    baseline_share: float
    expected: float
    ratio: float
    score: float
    lemma: str | None = Field(default=None, description="lemmas=true: the lemma the forms share (item: the most "
                                                        "used form)")
    forms: list[Form] | None = Field(default=None, description="lemmas=true: the item's surface forms in the "
                                                               "current window, most used first")


class Trends(BaseModel):
    field: str
    lemmas: bool = False
    method: str
    windows: list[TrendWindow]
    items: list[TrendItem]


class ValueCount(BaseModel):
    value: str | int | float
    count: int


class Degrees(BaseModel):
    out: dict[str, int]
    in_: dict[str, int] = Field(alias="in")
    in_degree_complete: bool


class Activity(BaseModel):
    interval: str
    buckets: list[TimeBucket]


class AuthorProfile(BaseModel):
    author: str
    author_ids: list[str]
    handles: list[str]
    platforms: list[ValueCount]
    records: int
    deleted_records: int
    first_seen: str | None
    last_seen: str | None
    activity: Activity
    languages: list[ValueCount]
    hashtags: list[ValueCount]
    sources: list[ValueCount]
    kinds: list[ValueCount]
    mentions_most: list[ValueCount]
    degrees: Degrees
    observed_profile: dict[str, Any] | None = Field(description="Profile facts the platform gave (authors index)")
    inferred: dict[str, Any] | None = Field(description="Model-made features from the enrichment layer, labelled; "
                                                        "null when there are none")


class Health(BaseModel):
    status: str
