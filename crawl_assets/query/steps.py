"""Queries written once, run by a blocking client or by an asyncio one.

A query that needs Elasticsearch is a generator: it yields ``(method, kwargs)`` for each call it makes
(``"search"``, ``"open_point_in_time"``, ...), receives the call's response body, and returns its answer.
``run`` drives it with ``Elasticsearch`` (the CLI, Dagster steps, tests); ``run_async`` with
``AsyncElasticsearch`` on the event loop (the API: no worker-thread hop per request, see api/edge.py).
An error of a call is thrown into the generator at its ``yield``, so ``try/except`` around a ``yield``
reads like the blocking code it replaces.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, TypeVar

T = TypeVar("T")
Call = tuple[str, dict[str, Any]]
Query = Generator[Call, Any, T]


def call(method: str, **kwargs: Any) -> Generator[Call, Any, Any]:
    """``body = yield from call("search", index=..., ...)``: one Elasticsearch call's response body."""
    return (yield (method, kwargs))


class _Drive:
    """Where a query stands: its next ``call``, or ``done`` with its ``value``."""

    def __init__(self, query: Query[Any]) -> None:
        self.query, self.done, self.value = query, False, None
        self.call: Call = ("", {})
        self._step(lambda: next(query))

    def _step(self, resume: Any) -> None:
        try:
            self.call = resume()
        except StopIteration as finished:
            self.done, self.value = True, finished.value

    def settle(self, body: Any, error: Exception | None) -> None:
        """Hand the last call's body (or its error, raised at the query's ``yield``) to the query."""
        self._step((lambda: self.query.throw(error)) if error is not None else (lambda: self.query.send(body)))


def run(client: Any, query: Query[T]) -> T:
    """``query`` with a blocking client."""
    drive = _Drive(query)
    while not drive.done:
        method, kwargs = drive.call
        try:
            body, error = getattr(client, method)(**kwargs).body, None
        except Exception as exc:  # noqa: BLE001 - handed to the query, which re-raises what it does not handle
            body, error = None, exc
        drive.settle(body, error)
    return drive.value


async def _outcome(pending: Any) -> tuple[Any, Exception | None]:
    try:
        return (await pending).body, None
    except Exception as exc:  # noqa: BLE001 - handed to the query, which re-raises what it does not handle
        return None, exc


async def run_async(client: Any, query: Query[T]) -> T:
    """``query`` with an ``AsyncElasticsearch`` client, on the running event loop."""
    drive = _Drive(query)
    while not drive.done:
        drive.settle(*await _outcome(getattr(client, drive.call[0])(**drive.call[1])))
    return drive.value
