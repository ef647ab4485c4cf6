"""Retry policies shared by assets: transient errors back off with jitter; permanent ones use
``dg.Failure(allow_retries=False)`` at the raise site instead."""

from __future__ import annotations

import dagster as dg

TRANSIENT_RETRY = dg.RetryPolicy(
    max_retries=3, delay=10, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS
)
