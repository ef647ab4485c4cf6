"""Property-based fuzzing of every operation from the published /openapi.json (schemathesis, against the
app on the pipeline-built index): no 5xx, every answer's status, content type, headers and body match
the schema, and schema-invalid requests are refused with a 4xx."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from crawl_assets.api.app import create_app
from crawl_assets.api.keys import KeyStore
from crawl_assets_tests.api.conftest import auth, make_client

# The schema is read from the app at collection time; its collaborators (the session's node, the world's
# key store) are put in place by the test itself, before each call.
APP = create_app(None, KeyStore("sqlite://"))  # type: ignore[arg-type]
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_server_error_and_answers_match_the_schema(case, world) -> None:
    if APP.state.api.es is None:
        APP.state.api = make_client(world, rate_per_minute=1_000_000).app.state.api
    # Accepted-by-the-schema is not accepted-by-the-API for rules a schema cannot say (start before end, an
    # IANA time zone, at most N timeline buckets, a cursor this server signed): those are 400s with a message,
    # which the other checks still hold to the documented error shape.
    case.call_and_validate(headers=auth(world), excluded_checks=[positive_data_acceptance])
