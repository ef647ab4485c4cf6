"""Enrichment features (docs/ENRICHMENT.md) through the API: topics (list, records by topic, timeline). Every
answer is inferred, labelled so, and read from the caller's tenant's features index only."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from crawl_assets.api.edge import (CallerDep, ERROR_RESPONSES, ErrorBody, answer, bad_request, instant, not_found, utc,
                                   zone as _zone)
from crawl_assets.api.access import ApiState
from crawl_assets.enrich import search as features
from crawl_assets.query.aggregations import MAX_TIMELINE_BUCKETS

router = APIRouter(prefix="/v1", tags=["features"], responses=ERROR_RESPONSES)
INFERRED = "inferred: an unsupervised topic model over this tenant's records (docs/ENRICHMENT.md#topics)"
TopicId = Annotated[int, Path(ge=1, le=2_147_483_647, description="A topic id (stable across re-fits)")]


class Topic(BaseModel):
    topic_id: int
    label: str = Field(description="The three surface forms seen most among its top terms")
    terms: list[str] = Field(description="Top stems, heaviest first")
    term_weights: list[float]
    forms: list[str] = Field(description="The surface form seen most of each top stem")
    records: int = Field(description="Records with this topic among theirs")
    share: float = Field(description="records / records with any topic")
    first_seen: str | None
    last_seen: str | None
    fitted_at: str | None
    fitted_records: int = Field(description="Records of the tenant when the model was fitted")
    enricher_version: str


class TopicList(BaseModel):
    inferred: str
    topics: list[Topic]


class TopicRecords(BaseModel):
    inferred: str
    topic: Topic
    records: list[dict[str, Any]] = Field(description="Records, newest first, each with `topics`: its topic ids and "
                                                      "weights")


class TopicBucket(BaseModel):
    start: str
    count: int


class TopicTimeline(BaseModel):
    inferred: str
    topic: Topic
    interval: str
    time_zone: str
    buckets: list[TopicBucket]


@router.get("/topics", response_model=TopicList, summary="The tenant's topics (inferred), the most records first")
async def topic_list(request: Request, who: CallerDep,
                     size: Annotated[int, Query(ge=1, le=500)] = 100) -> Response:
    return await answer(_list, request.app.state.api, who.tenant, size)


def _list(state: ApiState, tenant: str, size: int) -> TopicList:
    return TopicList(inferred=INFERRED, topics=[Topic.model_validate(t) for t in features.topics(state.es, tenant,
                                                                                                 size=size)])


def _topic(state: ApiState, tenant: str, topic_id: int) -> Topic:
    found = features.topic(state.es, tenant, topic_id)
    if found is None:
        raise not_found(f"no topic {topic_id}")
    return Topic.model_validate(found)


@router.get("/topics/{topic_id}/records", response_model=TopicRecords, summary="Records of a topic, newest first",
            responses={404: {"model": ErrorBody, "description": "No such topic for this tenant"}})
async def records_by_topic(request: Request, who: CallerDep, topic_id: TopicId,
                           start: Annotated[str | None, instant("created_at >= start")] = None,
                           end: Annotated[str | None, instant("created_at < end")] = None,
                           size: Annotated[int, Query(ge=1, le=500)] = 50) -> Response:
    lo, hi = utc(start, "start"), utc(end, "end")
    if lo and hi and lo >= hi:
        raise bad_request("start must be before end")
    return await answer(_records, request.app.state.api, who.tenant, topic_id, lo, hi, size)


def _records(state: ApiState, tenant: str, topic_id: int, lo: Any, hi: Any, size: int) -> TopicRecords:
    topic = _topic(state, tenant, topic_id)
    records = features.topic_records(state.es, tenant, topic_id, size=size, start=lo and lo.isoformat(),
                                     end=hi and hi.isoformat())
    return TopicRecords(inferred=INFERRED, topic=topic, records=records)


@router.get("/topics/{topic_id}/timeline", response_model=TopicTimeline, summary="Records of a topic over time",
            responses={404: {"model": ErrorBody, "description": "No such topic for this tenant"}})
async def topic_timeline(request: Request, who: CallerDep, topic_id: TopicId,
                         interval: Annotated[Literal["hour", "day", "week", "month", "quarter", "year"],
                                             Query(description="Calendar bucket")] = "day",
                         tz: Annotated[str, Query(max_length=64, description="IANA time zone of the buckets")] = "UTC",
                         ) -> Response:
    return await answer(_timeline, request.app.state.api, who.tenant, topic_id, interval, _zone(tz))


def _timeline(state: ApiState, tenant: str, topic_id: int, interval: str, tz: str) -> TopicTimeline:
    topic = _topic(state, tenant, topic_id)
    try:
        buckets = features.topic_timeline(state.es, tenant, topic_id, interval=interval, time_zone=tz,
                                          max_buckets=MAX_TIMELINE_BUCKETS)
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    return TopicTimeline(inferred=INFERRED, topic=topic, interval=interval, time_zone=tz,
                         buckets=[TopicBucket(**b) for b in buckets])
