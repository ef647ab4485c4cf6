"""The public record/edge contract shared by every source (field names are public: docs/SCHEMA.md).

One ``Record`` is one observed post/message/review. Observed facts and model-made features stay apart:
everything a model computed lives in ``enrichment`` only. Datetimes are timezone-aware UTC instants and
serialize as ISO 8601 with a ``Z`` suffix.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field

from crawl_assets.core import catalog

_ZERO = timedelta(0)


def _to_utc(value: datetime) -> datetime:
    """Store every instant in UTC so equal instants compare and serialize identically."""
    if value.tzinfo is timezone.utc:
        return value
    return value.astimezone(timezone.utc)


UtcDatetime = Annotated[AwareDatetime, AfterValidator(_to_utc)]

# The installed source types (crawl_assets.core.catalog, by name): a record of another platform is refused.
PLATFORMS: tuple[str, ...] = catalog.platforms()
Platform = Literal[PLATFORMS]  # type: ignore[valid-type]
EdgeType = Literal["reply", "quote", "repost", "mention", "hashtag"]
# What the normalizer had to do to the observation (docs/SCHEMA.md, "Provenance flags").
ProvenanceFlag = Literal["invalid_utf8_replaced", "created_at_from_id", "local_time_converted", "value_out_of_range",
                         "context_missing"]
PROVENANCE_FLAGS: tuple[str, ...] = ProvenanceFlag.__args__  # type: ignore[attr-defined]


class Media(BaseModel):
    """One attachment, with what the platform told about it (no download)."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(description="photo, video, animated_gif, audio, voice, document, sticker, webpage, poll, ...")
    id: str | None = Field(None, description="The platform's id of the attachment (media_key on X).")
    mime: str | None = None
    size: int | None = Field(None, description="Size in bytes.")
    width: int | None = None
    height: int | None = None
    duration: float | None = Field(None, description="Seconds, for audio and video.")
    url: str | None = Field(None, description="Where it can be seen/fetched, or the export's relative path.")


class Metrics(BaseModel):
    """Counters as the platform gave them at collection time (null when not given)."""

    model_config = ConfigDict(extra="forbid")

    likes: int | None = None
    reposts: int | None = None
    replies: int | None = None
    quotes: int | None = None
    views: int | None = None
    forwards: int | None = None
    bookmarks: int | None = None
    reactions: dict[str, int] | None = Field(None, description="Reaction (emoji or custom id) -> count.")


class Provenance(BaseModel):
    """Where an observation came from, so it can be re-derived from the raw batch without collecting again."""

    model_config = ConfigDict(extra="forbid")

    collected_at: UtcDatetime | None = Field(None, description="When the raw observation was collected.")
    method: str = Field(description="How it was collected: api, export, stream, ...")
    source: str = Field(description="The registered source name.")
    format: str = Field(description="The input format it was normalized from (x-v2, telegram-export, ...).")
    run_id: str | None = Field(None, description="The Dagster run (or CLI invocation) that produced it.")
    raw_pointer: str | None = Field(None, description="Path of the raw batch file.")
    raw_line: int | None = Field(None, description="1-based line (or item ordinal) in the raw batch.")
    flags: list[ProvenanceFlag] = Field(
        default_factory=list,
        description="What normalization had to do to this observation: invalid_utf8_replaced (bytes that were "
        "not UTF-8 became U+FFFD), created_at_from_id (no creation time in the input: derived from the X id), "
        "local_time_converted (an export's local time converted with the source's timezone option), "
        "value_out_of_range (an integer beyond 64 bits was set aside: see metadata.out_of_range), context_missing "
        "(the input lacked context the platform gives elsewhere: what it lacks is kept from an earlier observation).",
    )


class Record(BaseModel):
    """One normalized observation; ``key`` is stable across collection methods."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=3, description="x:{tweet_id}, telegram:{chat_id}:{message_id}, ...")
    platform: Platform
    tenant: str
    source: str
    kind: str = Field(description="post, reply, quote, repost, message, comment, review, ...")
    native_id: str
    author_id: str | None = None
    author_handle: str | None = None
    created_at: UtcDatetime
    edited_at: UtcDatetime | None = None
    deleted: bool = False
    deleted_at: UtcDatetime | None = None
    text: str = ""
    text_clean: str = ""
    lang: str | None = Field(None, description="ISO 639-1: the platform's own value when given, else detected.")
    reply_to: str | None = None
    quote_of: str | None = None
    repost_of: str | None = None
    conversation_id: str | None = None
    hashtags: list[str] = Field(default_factory=list, description="Without '#', casefolded, in order, unique.")
    mentions: list[str] = Field(default_factory=list, description="Handles without '@', casefolded, unique.")
    urls: list[str] = Field(default_factory=list, description="Expanded when the platform gives the expansion.")
    media: list[Media] = Field(default_factory=list)
    metrics: Metrics = Field(default_factory=Metrics)
    metadata: dict[str, Any] = Field(default_factory=dict, description="Source-specific facts with no common field.")
    provenance: Provenance
    enrichment: dict[str, Any] = Field(default_factory=dict, description="Model-made features, never observed facts.")


class Edge(BaseModel):
    """One relation between a record (``src`` is always a record key) and another node."""

    model_config = ConfigDict(extra="forbid")

    type: EdgeType
    src: str
    dst: str
    created_at: UtcDatetime | None = None
    platform: Platform
    tenant: str


class Rejection(BaseModel):
    """An input item that could not be normalized: reported with where it is and why, never dropped silently."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The input file name (or stream name).")
    line: int | None = Field(None, description="1-based line, or item ordinal for whole-document formats.")
    reason: str
    snippet: str = Field("", max_length=520, description="The start of the raw item, at most 500 characters.")
    error: bool = Field(True, description="False for input that is valid but not a post (e.g. a service message).")


SNIPPET_CHARS = 500


def snippet_of(raw: bytes | str) -> str:
    """The start of a raw item for a rejection message, bounded so a huge line never floods logs."""
    if isinstance(raw, bytes):
        raw = raw[: SNIPPET_CHARS * 4].decode("utf-8", errors="replace")
    text = raw.strip()
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"


def record_json_schema() -> dict[str, Any]:
    """The JSON Schema of a ``Record`` as it appears on the wire (serialization mode)."""
    return Record.model_json_schema(mode="serialization")
