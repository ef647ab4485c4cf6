"""``POST /v1/releases``: a release of the key's tenant (docs/RELEASES.md) built for the caller and sent as one
tar archive. An export, not a write: the lake is only read, nothing is noted in it, and the package is built in a
private temporary folder that is gone before the first byte is sent (the open file is streamed)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Annotated, Literal

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from starlette.concurrency import run_in_threadpool

from crawl_assets.api.access import ApiState
from crawl_assets.api.edge import ApiProblem, CallerDep, ERROR_RESPONSES, ErrorBody, bad_request
from crawl_assets.core.bodies import read_capped
from crawl_assets.query.filters import RecordFilter, source_keys
from crawl_assets.lake import Lake
from crawl_assets.release.archive import write_tar
from crawl_assets.release.build import ReleaseRefused, ReleaseTooLarge, build_package
from crawl_assets.release.query import ReleaseQuery
from crawl_assets.schema.record import Platform

MAX_BODY = 16 * 1024
MAX_VALUES = 50
CHUNK = 1 << 16
router = APIRouter(prefix="/v1", tags=["releases"], responses=ERROR_RESPONSES)
Value = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Values = Annotated[list[Value], Field(max_length=MAX_VALUES)]


class ReleaseRequest(BaseModel):
    """The options of ``crawl-assets release create`` but the tenant (the key's) and the folder (none: sent)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    platforms: Annotated[list[Platform], Field(max_length=16)] = []
    sources: Values = Field(default=[], description="Source names or keys of the key's tenant")
    langs: Values = []
    kinds: Values = []
    authors: Values = []
    hashtags: Values = []
    mentions: Values = []
    since: AwareDatetime | None = Field(default=None, description="Created at or after (ISO 8601 with a zone)")
    until: AwareDatetime | None = Field(default=None, description="Created before (ISO 8601 with a zone)")
    deleted: Literal["exclude", "include", "only"] = "exclude"
    dehydrate: Annotated[list[Platform], Field(max_length=16, description="Platforms released as ids only "
                                                                          "(beside those whose terms say so)")] = []
    pseudonymize: bool = Field(default=False, description="Author ids replaced by keyed hashes (the server's "
                                                          "release key, never sent), handles dropped")


_BODY = {"required": True, "content": {"application/json": {"schema": ReleaseRequest.model_json_schema()}}}
_ANSWERS = {
    200: {"description": "The package: a tar archive of a folder named after the release id",
          "content": {"application/x-tar": {"schema": {"type": "string", "format": "binary"}}}},
    404: {"model": ErrorBody, "description": "A named source is not one of this tenant's"},
    413: {"model": ErrorBody, "description": "The request body, or the release, is larger than this server allows"},
}


async def _body(request: Request) -> ReleaseRequest:
    """The JSON body, read no further than ``MAX_BODY`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise ApiProblem(413, "body_too_large", f"the request body is over {MAX_BODY} bytes")
    data = await read_capped(request.stream(), MAX_BODY)
    if data is None:
        raise ApiProblem(413, "body_too_large", f"the request body is over {MAX_BODY} bytes")
    if not data.strip():
        raise bad_request("body: a JSON object of release options is required ({} for all the tenant's records)")
    try:
        return ReleaseRequest.model_validate_json(data)
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:10]]
        raise bad_request("; ".join(problems)) from None


def _query(tenant: str, lake: Lake, body: ReleaseRequest) -> ReleaseQuery:
    """The release query of the key's tenant; a source not among the tenant's is missing, whoever has it."""
    known = {source for _, source in lake.tenant_sources(tenant)}
    for value in body.sources:
        if not known.intersection(source_keys(tenant, (value,))):
            raise ApiProblem(404, "not_found", f"no source {value!r}")
    if body.since and body.until and body.since >= body.until:
        raise bad_request("since: must be before until")
    try:
        flt = RecordFilter(platforms=tuple(body.platforms), sources=tuple(body.sources), langs=tuple(body.langs),
                           kinds=tuple(body.kinds), authors=tuple(body.authors), hashtags=tuple(body.hashtags),
                           mentions=tuple(body.mentions), start=body.since, end=body.until, deleted=body.deleted)
        return ReleaseQuery(tenant, flt, tuple(sorted(set(body.dehydrate))), body.pseudonymize)
    except ValueError as exc:
        raise bad_request(str(exc)) from None


def _pseudonym_key(lake: Lake, query: ReleaseQuery) -> bytes | None:
    from crawl_assets import settings
    from crawl_assets.erasure.log import key_from_file

    if not query.pseudonymize:
        return None
    path = settings.release_key_file()
    if path is None:
        raise ApiProblem(400, "bad_request", "pseudonymize: this server has no release key (its operator sets one)")
    return key_from_file(path, lake, what="the release key", env="CRAWL_RELEASE_KEY_FILE", create=False)


def _build(state: ApiState, query: ReleaseQuery, key_id: str) -> tuple[str, int, IO[bytes]]:
    """(release id, records, the archive opened for reading); the temporary folder is removed before returning."""
    assert state.lake is not None
    key = _pseudonym_key(state.lake, query)
    temp = Path(tempfile.mkdtemp(prefix="crawl-release-", dir=state.release_tmp))
    try:
        folder = temp / "package"
        folder.mkdir(mode=0o700)
        try:
            summary = build_package(state.lake, query, folder, recipient=f"api key {key_id}",
                                    pseudonym_key=key, max_records=state.release_max_records)
        except ReleaseTooLarge as exc:
            raise ApiProblem(413, "release_too_large", str(exc)) from None
        except ReleaseRefused as exc:
            raise bad_request(str(exc)) from None
        archive = open(os.open(temp / "release.tar", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600), "w+b")
        try:
            write_tar(folder, summary.release_id, archive)
            archive.seek(0)
        except BaseException:
            archive.close()
            raise
        return summary.release_id, summary.records, archive
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _chunks(archive: IO[bytes]) -> Iterator[bytes]:
    with archive:
        while chunk := archive.read(CHUNK):
            yield chunk


@router.post("/releases", summary="Build a release of this tenant's records and send it as a tar archive",
             openapi_extra={"requestBody": _BODY}, response_class=StreamingResponse, responses=_ANSWERS)
async def create(request: Request, who: CallerDep) -> StreamingResponse:
    state: ApiState = request.app.state.api
    if state.lake is None:
        raise ApiProblem(503, "releases_unavailable", "this server builds no releases (no lake configured)",
                         {"Retry-After": "60"})
    body = await _body(request)
    query = await run_in_threadpool(_query, who.tenant, state.lake, body)
    if not state.releases.acquire(who.key_id):
        raise ApiProblem(429, "release_in_progress", "this key's previous release is still being built; retry "
                         "when it is sent", {"Retry-After": "10"})
    try:
        release_id, records, archive = await run_in_threadpool(_build, state, query, who.key_id)
    finally:
        state.releases.release(who.key_id)
    return StreamingResponse(_chunks(archive), media_type="application/x-tar", headers={
        "Content-Disposition": f'attachment; filename="{release_id}.tar"', "X-Release-Id": release_id,
        "X-Release-Records": str(records)})
