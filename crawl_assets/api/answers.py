"""No worker-thread hop for the endpoints that only query (``answer_query``): their ``index.steps`` query runs
on the event loop with the asyncio client, and the answer is built there (a few hundred microseconds of
pydantic for a page of records). Under load, each hop between threads and processes waits for a CPU on a
busy machine; awaiting Elasticsearch on the loop leaves one wake-up per request and answer.

The others: one worker-thread hop per request: an endpoint is ``async`` and hands its blocking work (the Elasticsearch
calls and building its pydantic answer) to ``answer``, which runs it in the thread pool and serializes the
model to JSON there, with pydantic's serializer.

Why (profiled under load, docs/API.md): a plain ``def`` endpoint with plain ``def``
dependencies cost four thread-pool hops per request (each dependency, the endpoint, then FastAPI's
re-validation of the returned model); on a busy machine each hop waits to be scheduled, and half of the
server's samples sat in that hand-over. The model is validated once, when the endpoint builds it; FastAPI
returns a ``Response`` as is, so it is not validated and encoded a second time. The routes keep
``response_model`` for the OpenAPI schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from crawl_assets.index import steps


def as_json(model: BaseModel) -> Response:
    """``model`` as FastAPI would answer it for ``response_model=type(model)`` (field aliases used)."""
    return Response(type(model).__pydantic_serializer__.to_json(model, by_alias=True), media_type="application/json")


def _built(work: Callable[..., BaseModel], args: tuple[Any, ...]) -> Response:
    return as_json(work(*args))


async def answer(work: Callable[..., BaseModel], *args: Any) -> Response:
    """``work(*args)`` run in the thread pool; its model answered as JSON."""
    return await run_in_threadpool(_built, work, args)


async def answer_query(state: Any, query: steps.Query[Any], build: Callable[[Any], BaseModel]) -> Response:
    """``build(result of query)`` as JSON: the query awaited on the event loop with the state's asyncio client,
    or run with the blocking client in the thread pool when the app has none."""
    client = state.async_es()
    if client is None:
        return await run_in_threadpool(lambda: as_json(build(steps.run(state.es, query))))
    return as_json(build(await steps.run_async(client, query)))
