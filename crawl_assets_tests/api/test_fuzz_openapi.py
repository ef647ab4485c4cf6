"""Property-based fuzzing of every operation from the published /openapi.json (schemathesis, against the
app on the pipeline-built index): no 5xx, every answer's status, content type, headers and body match
the schema, and schema-invalid requests are refused with a 4xx."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.core.failures import AcceptedNegativeData
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

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
    response = case.call(headers=auth(world))
    case.validate_response(response, excluded_checks=[positive_data_acceptance, negative_data_rejection])
    try:
        case.validate_response(response, checks=[negative_data_rejection])
    except Exception as exc:  # noqa: BLE001 - schemathesis raises its failure or a group of them
        failures = getattr(exc, "exceptions", [exc])
        if not all(isinstance(f, AcceptedNegativeData) for f in failures) or not sent_query_is_valid(case, response):
            raise


def sent_query_is_valid(case, response) -> bool:  # noqa: ANN001
    """Whether every mutated query parameter, as the request actually carried it, is valid by the schema.

    schemathesis 4.32 judges a boolean type mutation of a string parameter by ``str(False)`` ("False"), but the
    request carries ``false``, which a lowercase pattern accepts: the API rightly answers 200, and the
    check reports it when two such mutations come together (seen: ``?kind=false&source=false``). Only that
    case is forgiven: each mutated parameter's values on the wire must validate against its schema, and
    every other check still ran."""
    mutations = getattr(case.meta.phase.data, "mutations", None) or []
    sent = parse_qs(urlsplit(str(response.request.url)).query, keep_blank_values=True)
    params = {p.name: p for p in case.operation.query}
    for mutation in mutations:
        param = params.get(mutation.parameter)
        if param is None or mutation.parameter not in sent:
            return False
        values = sent[mutation.parameter]
        wire = values if "array" in str(param.validation_schema) else values[-1]
        if not param.is_valid(wire):
            return False
    return bool(mutations)


def test_only_a_request_valid_on_the_wire_is_forgiven() -> None:
    from types import SimpleNamespace as NS

    operation = schema["/v1/networks/{network}"]["GET"]

    def case(*names: str):  # noqa: ANN202 - the parts of a schemathesis case the function reads
        mutations = [NS(parameter=name) for name in names]
        return NS(meta=NS(phase=NS(data=NS(mutations=mutations))), operation=operation)

    def sent(query: str):  # noqa: ANN202
        return NS(request=NS(url=f"http://testserver/v1/networks/mention?{query}"))

    assert sent_query_is_valid(case("kind", "source"), sent("kind=false&source=false"))
    assert not sent_query_is_valid(case("kind", "source"), sent("kind=False&source=false")), "uppercase breaks the pattern"
    assert not sent_query_is_valid(case("deleted"), sent("deleted=nope")), "not in the enum"
    assert not sent_query_is_valid(case("kind"), sent("source=x")), "the mutated parameter was not sent"
    assert not sent_query_is_valid(case(), sent("kind=false")), "no mutation: nothing to forgive"
