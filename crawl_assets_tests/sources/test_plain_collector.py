"""The shared engine path of the live collectors runs without Dagster: raw batches then the checkpoint, and the
engine's errors sorted into what the orchestration acts on (``PauseSource``, ``RetryLater``) or left to its
retry policy. A real lake; the checkpointer is a plain implementation of ``sdk.sync.Checkpointer``."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.errors import (BadRequest, MissingCredential, PauseSource, PermanentError, RateLimitWait, RetryLater,
                                     SourceConfigError)
from crawl_assets.sdk.sync import CollectEnv, StoreBatch, SyncResult, opened, run_engine


class MemoryCheckpointer:
    def __init__(self, state: dict[str, Any]):
        self.saved: list[dict[str, Any]] = [state]
        self.saves = 0

    def load(self) -> dict[str, Any]:
        return dict(self.saved[-1])

    def save(self, state: dict[str, Any], **metadata: Any) -> None:
        self.saved.append(state)
        self.saves += 1


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, msg: str) -> None:
        self.lines.append(msg)

    def warning(self, msg: str) -> None:
        self.lines.append(msg)


ENTRY = SourceEntry(name="f", tenant="acme", platform="discourse", kind="forum", identifier="https://forum.example.org")


def _env(tmp_path) -> CollectEnv:
    return CollectEnv(Lake(str(tmp_path / "lake")), "run-1", MemoryCheckpointer({"page": 0}), Log())


def _one_page_then(error: Exception | None):
    def sync(state: dict[str, Any], store: StoreBatch) -> SyncResult:
        store([b'{"page": 1}'], {"page": state["page"] + 1}, {})
        if error is not None:
            raise error
        return SyncResult({"page": 1}, None)
    return sync


def test_a_page_is_stored_then_checkpointed(tmp_path):
    env = _env(tmp_path)
    result, batches = run_engine(ENTRY, env, "discourse", _one_page_then(None), rate_limit_retries=3)
    assert result.state == {"page": 1} and len(batches) == 1
    assert env.lake.raw_batches("acme", "discourse", ENTRY.key)[0].manifest.batch_id == batches[0].manifest.batch_id
    assert env.checkpointer.saved[-1] == {"page": 1} and env.checkpointer.saves == 1


def test_a_rate_limit_asks_to_retry_after_the_wait_keeping_what_was_stored(tmp_path):
    env = _env(tmp_path)
    wait = RateLimitWait("rate limited; retry in 90s", seconds=89.2, endpoint="posts")
    with pytest.raises(RetryLater) as caught:
        run_engine(ENTRY, env, "discourse", _one_page_then(wait), rate_limit_retries=4)
    assert (caught.value.seconds, caught.value.max_retries, str(caught.value)) == (90, 4, str(wait))
    assert caught.value.__cause__ is wait
    assert len(env.lake.raw_batches("acme", "discourse", ENTRY.key)) == 1 and env.checkpointer.saves == 1
    assert "1 batches stored" in env.log.lines[-1]


@pytest.mark.parametrize("error", [PermanentError("HTTP 403 Forbidden", status=403),
                                   SourceConfigError("source acme.discourse.f: wrong kind")])
def test_permanent_and_configuration_errors_pause_the_source(tmp_path, error):
    with pytest.raises(PauseSource, match=str(error)) as caught:
        run_engine(ENTRY, _env(tmp_path), "discourse", _one_page_then(error), rate_limit_retries=1)
    assert caught.value.__cause__ is None


def test_a_refused_request_pauses_only_when_the_collector_says_so(tmp_path):
    refused = BadRequest("max_results: must be between 10 and 100", parameters={"max_results": "..."})
    with pytest.raises(BadRequest):
        run_engine(ENTRY, _env(tmp_path), "discourse", _one_page_then(refused), rate_limit_retries=1)
    with pytest.raises(PauseSource, match="^X refused the request: max_results"):
        run_engine(ENTRY, _env(tmp_path), "discourse", _one_page_then(refused), rate_limit_retries=1,
                   refused="X refused the request: ")


def test_other_errors_are_left_to_the_retry_policy(tmp_path):
    with pytest.raises(ConnectionResetError):
        run_engine(ENTRY, _env(tmp_path), "discourse", _one_page_then(ConnectionResetError()), rate_limit_retries=1)


@pytest.mark.parametrize("error", [MissingCredential("set CRAWL_X_BEARER_TOKEN__ACME"), ValueError("options.x: bad")])
def test_a_client_that_cannot_be_built_pauses_the_source(error):
    def build():
        raise error
    with pytest.raises(PauseSource, match=str(error).replace(".", r"\.")):
        opened(build)


def test_the_collectors_import_no_dagster():
    code = ("import sys; import crawl_assets.sdk.sync, crawl_assets.sources.x.collect, "
            "crawl_assets.sources.telegram.collect; print('dagster' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
