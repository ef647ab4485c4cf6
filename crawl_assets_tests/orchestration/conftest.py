"""Fixtures for orchestration tests: the X stand-in, a registry of X sources, a test instance, resources."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.sdk.tenant_secrets import TenantSecret
from crawl_assets.sources.x.resource import XResource
from crawl_assets_tests.standins.x_api import XAPIServer
from crawl_assets_tests.standins.x_corpus import build_corpus

USERS = ("persian_news", "data_eng", "shiraz_dev", "open_science")


def x_registry(path: Path, names: dict[str, str], *, extra: str = "") -> Path:
    """A registry of X timelines: ``{source name: account}``."""
    lines = ["sources:"]
    for name, account in names.items():
        lines += [f"  - name: {name}", "    tenant: acme", "    platform: x", "    kind: account_timeline",
                  f"    identifier: {account}", "    policy: {interval_minutes: 5}", "    options: {max_results: 50}"]
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


@pytest.fixture
def x_server():
    with XAPIServer(build_corpus(300, days=5), timeout_sleep=0.5) as srv:
        yield srv


@pytest.fixture
def resources(tmp_path, x_server):
    return {
        "lake": LakeResource(root=str(tmp_path / "lake")),
        "registry": RegistryResource(path=str(tmp_path / "sources.yaml")),
        "x": XResource(base_url=x_server.url, secrets=[TenantSecret(tenant="acme", value="test-token")], backoff_seconds=0.01, max_retries=1,
                       reset_margin_seconds=0.05, max_inline_wait_seconds=0.5),
    }


@pytest.fixture
def instance(isolated_env):
    with dg.instance_for_test() as inst:
        yield inst
