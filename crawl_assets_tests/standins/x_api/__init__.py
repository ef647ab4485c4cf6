"""An X API v2 stand-in for tests: real HTTP on 127.0.0.1 (a thread, a random port), real v2 bodies.

Endpoints: ``/2/users/by/username/:u``, ``/2/users/:id/tweets``, ``/2/tweets/search/recent``,
``/2/tweets/search/all``, ``/2/tweets?ids=``, with ``data``/``includes``/``meta`` (``newest_id``,
``oldest_id``, ``result_count``, ``next_token``), paging by token (``pagination_token`` on timelines,
``next_token`` on searches), ``since_id``/``until_id``/``start_time``/``end_time``, ``max_results`` bounds
(400 ``invalid-request`` bodies when out of range), the 3,200-post timeline cap and the 7-day window of
recent search, bearer auth (401), full-archive access (403 ``client-forbidden``), suspended and unknown
users (200 with ``errors`` as X answers them), and rate-limit headers with a per-endpoint budget per
window (429 when exceeded).

Faults are queued with :meth:`XAPIServer.inject` (429, 5xx, timeouts, dropped connections, malformed
bodies, 401/403) and every request is logged (:attr:`XAPIServer.log`, :meth:`XAPIServer.counts`) so tests
assert on requests made, not on timing.

Modules: ``wire`` (bounds, records, problem bodies, tokens), ``endpoints`` (what each endpoint answers),
``server`` (the HTTP server, test controls, auth, rate limits and faults).
"""

from crawl_assets_tests.standins.x_api.server import XAPIServer
from crawl_assets_tests.standins.x_api.wire import Fault, LoggedRequest, XError

__all__ = ["Fault", "LoggedRequest", "XAPIServer", "XError"]
