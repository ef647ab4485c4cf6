"""Aggregations, trends and author profiles."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import Response

from crawl_assets.api.edge import (CallerDep, ERROR_RESPONSES, ErrorBody, PRINTABLE, answer, answer_query, bad_request,
                                   instant, not_found, record_filter, utc, zone as _zone)
from crawl_assets.api.access import ApiState
from crawl_assets.api.models import AuthorProfile, Counts, Timeline, Top, Trends
from crawl_assets.query import aggregations, trends as trend_index
from crawl_assets.query.aggregations import TooManyBuckets
from crawl_assets.index.naming import parse_instant
from crawl_assets.persian import jalali
from crawl_assets.query.filters import RecordFilter
from crawl_assets.query.profiles import author_profile

router = APIRouter(prefix="/v1", tags=["analysis"], responses=ERROR_RESPONSES)
FilterDep = Annotated[RecordFilter, Depends(record_filter)]
Interval = Literal["minute", "hour", "day", "week", "month", "quarter", "year"]
Calendar = Literal["gregorian", "jalali"]
DURATION = re.compile(r"([1-9][0-9]{0,3})([mhd])")
TREND_METHOD = ("score = (count - expected) / sqrt(expected + 1), expected = the item's share of the baseline "
                "windows' records x the current window's records; see docs/API.md#trends")


@router.get("/aggregations/timeline", response_model=Timeline, summary="Records over time (date histogram)")
async def timeline(request: Request, who: CallerDep, flt: FilterDep,
                   interval: Annotated[Interval, Query(description="Calendar bucket")] = "day",
                   tz: Annotated[str | None, Query(max_length=64, description="IANA time zone of the buckets "
                                                   "(default UTC; Asia/Tehran with calendar=jalali)")] = None,
                   calendar: Annotated[Calendar, Query(description="jalali: Jalali months, quarters and years, "
                                                       "weeks from Saturday, each bucket named")] = "gregorian",
                   ) -> Response:
    tz = _zone(tz or ("Asia/Tehran" if calendar == "jalali" else "UTC"))
    try:
        return await answer_query(request.app.state.api,
                                  aggregations.timeline_query(who.tenant, flt, interval, tz, calendar),
                                  lambda rows: Timeline(interval=interval, time_zone=tz, calendar=calendar,
                                                        buckets=rows))
    except aggregations.TooManyBuckets as exc:
        raise bad_request(str(exc)) from None


@router.get("/aggregations/top/{field}", response_model=Top, summary="Most frequent hashtags, authors, mentions, languages, ...")
async def top(request: Request, who: CallerDep, flt: FilterDep,
              field: Annotated[Literal["hashtags", "authors", "mentions", "languages", "sources", "platforms", "kinds"],
                               Path()],
              size: Annotated[int, Query(ge=1, le=aggregations.MAX_TOP)] = 20,
              lemmas: Annotated[bool, Query(description="hashtags: count the forms of a word together (a bucket "
                                                        "per lemma, with its forms)")] = False) -> Response:
    if lemmas and field != "hashtags":
        raise bad_request("lemmas: only for hashtags")
    return await answer_query(request.app.state.api, aggregations.top_query(who.tenant, flt, field, size, lemmas),
                              lambda got: Top(field=field, **got))


@router.get("/aggregations/counts", response_model=Counts, summary="Live, deleted, edited and superseded records")
async def counts(request: Request, who: CallerDep, flt: FilterDep) -> Response:
    return await answer_query(request.app.state.api, aggregations.counts_query(who.tenant, flt),
                              lambda got: Counts(**got))


def _duration(text: str) -> timedelta:
    match = DURATION.fullmatch(text)
    if not match:
        raise bad_request(f"window: {text[:30]!r} is not a duration such as 30m, 6h, 1d or 7d")
    n, unit = int(match.group(1)), match.group(2)
    return {"m": timedelta(minutes=n), "h": timedelta(hours=n), "d": timedelta(days=n)}[unit]


@router.get("/trends", response_model=Trends, summary="Hashtags, mentions or words rising against the preceding windows")
async def rising(request: Request, who: CallerDep, flt: FilterDep,
                 field: Annotated[Literal["hashtags", "mentions", "words"], Query()] = "hashtags",
                 window: Annotated[str, Query(max_length=8, pattern=r"^[1-9][0-9]{0,3}[mhd]$",
                                              description="Window length: 30m, 6h, 1d, 7d")] = "1d",
                 until: Annotated[str | None, instant("End of the current window (default: now)")] = None,
                 baseline: Annotated[int, Query(ge=1, le=trend_index.MAX_BASELINE_WINDOWS)] = 4,
                 candidates: Annotated[int, Query(ge=1, le=trend_index.MAX_CANDIDATES)] = 200,
                 min_count: Annotated[int, Query(ge=1, le=1_000_000)] = 3,
                 size: Annotated[int, Query(ge=1, le=100)] = 20,
                 lemmas: Annotated[bool, Query(description="hashtags, words: count the forms of a word together "
                                                           "(an item per lemma, with its forms)")] = False,
                 calendar: Annotated[Calendar, Query(description="jalali: each window's start and end also named "
                                                     "in the Jalali calendar (in tz)")] = "gregorian",
                 tz: Annotated[str | None, Query(max_length=64, description="IANA time zone of the Jalali names "
                                                 "(default Asia/Tehran)")] = None) -> Response:
    if flt.start or flt.end:
        raise bad_request("trends take `until` and `window` (and `baseline` windows before it), not start/end")
    end = utc(until, "until") or datetime.now(timezone.utc)
    return await answer(_trends, request.app.state.api, who.tenant, flt,
                        dict(what=field, end=end, window=_duration(window), baseline=baseline, candidates=candidates,
                             min_count=min_count, size=size, lemmas=lemmas),
                        _zone(tz or "Asia/Tehran") if calendar == "jalali" else None)


def _trends(state: ApiState, tenant: str, flt: RecordFilter, options: dict, zone: str | None) -> Trends:
    try:
        got = trend_index.trends(state.es, tenant, flt, **options)
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    if zone is not None:  # calendar=jalali: each window's start and end named in the Jalali calendar
        where = ZoneInfo(zone)
        for w in got["windows"]:
            w["jalali"] = [jalali.label(parse_instant(w[k]), "minute", where) for k in ("start", "end")]
    return Trends(method=TREND_METHOD, **got)


@router.get("/authors/{author_ref}", response_model=AuthorProfile, response_model_by_alias=True,
            summary="An author's profile from observed data (inferred features labelled)",
            responses={404: {"model": ErrorBody, "description": "No record of that author for this tenant"}})
async def author(request: Request, who: CallerDep, flt: FilterDep,
                 author_ref: Annotated[str, Path(max_length=200, pattern=PRINTABLE,
                                             description="Platform author id or handle (@ optional)")],
                 interval: Annotated[Literal["day", "week", "month", "quarter", "year"],
                                     Query(description="Activity bucket")] = "month",
                 calendar: Annotated[Calendar, Query(description="jalali: Jalali activity buckets, named")] = "gregorian",
                 tz: Annotated[str | None, Query(max_length=64, description="IANA time zone of the Jalali buckets "
                                                 "(default Asia/Tehran)")] = None) -> Response:
    zone = _zone(tz or ("Asia/Tehran" if calendar == "jalali" else "UTC"))
    return await answer(_author, request.app.state.api, who.tenant, author_ref, flt, interval, calendar, zone)


def _author(state: ApiState, tenant: str, author_ref: str, flt: RecordFilter, interval: str, calendar: str,
            zone: str) -> AuthorProfile:
    try:
        got = author_profile(state.es, tenant, author_ref, flt, interval, calendar, zone)
    except TooManyBuckets as exc:
        raise bad_request(str(exc)) from None
    if got is None:
        raise not_found(f"no records of author {author_ref!r}")
    return AuthorProfile.model_validate(got)
