"""What each answer of the cluster means to the bulk sink is a table (``crawl_assets.index.refusals``): checked
here without a cluster; the sink's behaviour on a real node is ``test_es_sink.py``."""

from __future__ import annotations

import pytest
from elastic_transport import ConnectionError as TransportConnectionError
from elastic_transport import ConnectionTimeout, TransportError

from crawl_assets.index.refusals import backoff, item_outcome, request_failure, write_blocked

BLOCK = {"type": "cluster_block_exception", "reason": "index [x] blocked by: [FORBIDDEN/8/index write (api)];"}


@pytest.mark.parametrize(("result", "outcome"), [
    ({"status": 201, "result": "created"}, "created"),
    ({"status": 200, "result": "updated"}, "updated"),
    ({"status": 200, "result": "noop"}, "noop"),
    ({"status": 409, "error": {"type": "version_conflict_engine_exception", "reason": "older"}}, "noop"),
    ({"status": 409, "error": {"type": "other_conflict", "reason": "?"}}, "failed"),
    ({"status": 429, "error": {"type": "circuit_breaking_exception", "reason": "busy"}}, "retry"),
    ({"status": 503, "error": {"type": "es_rejected_execution_exception", "reason": "queue full"}}, "retry"),
    ({"status": 403, "error": BLOCK}, "retry"),
    # a node died: its primary is being replaced, or the master is being re-elected (issue 19's cluster test)
    ({"status": 503, "error": {"type": "unavailable_shards_exception", "reason": "[crawl-records-x-2026.03][0] "
                                "primary shard is not active Timeout: [1m]"}}, "retry"),
    ({"status": 503, "error": {"type": "cluster_block_exception",
                               "reason": "blocked by: [SERVICE_UNAVAILABLE/2/no master];"}}, "retry"),
    ({"status": 403, "error": {"type": "cluster_block_exception", "reason": "FORBIDDEN/5/index read-only"}}, "failed"),
    ({"status": 400, "error": {"type": "mapper_parsing_exception", "reason": "failed to parse [n]"}}, "failed"),
    ({"status": 500, "error": "a bare string"}, "failed"),
])
def test_each_item_result_has_one_outcome(result, outcome):
    kind, status, etype, reason = item_outcome(result)
    assert kind == outcome and status == result["status"]
    if kind == "failed":  # what a dead letter keeps
        assert etype and (reason or isinstance(result["error"], str))


def test_whole_request_failures_retry_only_what_may_pass_later():
    timeout = ConnectionTimeout("timed out")
    assert request_failure(timeout) == (None, "ConnectionTimeout", str(timeout), True)
    assert request_failure(TransportConnectionError("reset"))[3] is True
    assert request_failure(TransportError("tls: bad certificate"))[3] is False


def test_write_block_and_backoff():
    assert write_blocked(BLOCK["type"], BLOCK["reason"]) and not write_blocked("cluster_block_exception", "read-only")
    assert all(0 <= backoff(n, 0.25, 30.0) <= min(30.0, 0.25 * 2 ** n) for n in range(12))
