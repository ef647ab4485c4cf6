"""The settings every REST source resource shares: base URL, per-tenant secrets, retries, run budget.

A pull source's spec (``PullSpec``) gets its resource from :func:`source_resource`: a
:class:`RestSourceResource` with ``ENV`` = ``CRAWL_<PLATFORM>``, ``SECRET`` = the spec's secret suffix, whose
``client(entry)`` is the spec's ``open_client(resource, entry)``. A platform with settings of its own still
subclasses it (``SourceSpec.resource``). ``from_env()`` reads ``<ENV>_BASE_URL`` and every
``<ENV>_<SECRET>[__TENANT[__NAME]]``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import dagster as dg
from pydantic import Field

from crawl_assets import settings
from crawl_assets.core.catalog import SourceSpec, resolve
from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.sync import Budget
from crawl_assets.sdk.http import RetrySettings
from crawl_assets.sdk.tenant_secrets import TenantSecret, pick_secret, secrets_from_env


class RestSourceResource(dg.ConfigurableResource):
    """Credentials by (tenant, name) and how hard one run may try."""

    ENV: ClassVar[str] = ""
    SECRET: ClassVar[str] = ""
    DEFAULT_BASE_URL: ClassVar[str] = ""
    ENV_TUNABLES: ClassVar[tuple[str, ...]] = ("base_url",)  # fields read as <ENV>_<VARIABLE> (settings.source_tunables)

    base_url: str = Field("", description="API root ('' = the platform's public one); tests point it at a stand-in.")
    secrets: list[TenantSecret] = Field(default_factory=list, description="Per-tenant credentials; values via EnvVar.")
    timeout_seconds: float = Field(30.0, gt=0)
    max_retries: int = Field(4, ge=0, description="In-place retries on 5xx, timeouts, broken bodies.")
    backoff_seconds: float = Field(1.0, ge=0, description="First retry delay; doubles per retry, ±50% jitter.")
    max_inline_wait_seconds: float = Field(60.0, ge=0, description="Longer rate-limit waits end the step with RetryRequested.")
    max_requests_per_run: int = Field(2000, gt=0, description="Requests one run may make; the rest resumes next run.")
    max_run_seconds: float = Field(3000.0, gt=0, description="No new request starts after this long in one run.")
    rate_limit_retries: int = Field(5, ge=0, description="RetryRequested retries of a step waiting for a window.")

    @classmethod
    def secret_base(cls) -> str:
        return f"{cls.ENV}_{cls.SECRET}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """Built from every per-tenant secret variable (kept as ``EnvVar``) and the ``ENV_TUNABLES`` set in
        the environment (``<ENV>_BASE_URL``...; unset ones keep the fields' defaults)."""
        env = settings.environment() if environ is None else environ
        secrets = secrets_from_env(cls.secret_base(), env) if cls.SECRET else []
        return cls(secrets=secrets, **settings.source_tunables(cls.ENV, cls.ENV_TUNABLES, env))

    def root_url(self) -> str:
        return self.base_url or self.DEFAULT_BASE_URL

    def secret(self, tenant: str, name: str | None) -> str:
        """The secret of this tenant and credential name (``MissingCredential`` names the variable)."""
        return pick_secret(self.secrets, self.secret_base(), tenant, name)

    def retry_settings(self) -> RetrySettings:
        return RetrySettings(max_retries=self.max_retries, backoff_seconds=self.backoff_seconds,
                             max_inline_wait_seconds=self.max_inline_wait_seconds)

    def budget(self) -> Budget:
        return Budget(max_requests=self.max_requests_per_run, deadline=time.time() + self.max_run_seconds)

    def client(self, entry: SourceEntry) -> Any:
        raise NotImplementedError(f"{type(self).__name__} builds no client")


def resource_class(spec: SourceSpec) -> type[RestSourceResource]:
    """The resource class of a pull source without a resource of its own (see the module's docstring)."""
    if spec.pull is None or not spec.pull.client:
        raise ValueError(f"{spec.platform}: a shared REST resource needs a PullSpec with a client")
    open_client = resolve(spec.pull.client)

    def client(self: RestSourceResource, entry: SourceEntry) -> Any:
        return open_client(self, entry)

    name = "".join(part.title() for part in spec.platform.split("_")) + "Resource"
    return type(name, (RestSourceResource,), {
        "__module__": __name__, "__doc__": f"{spec.platform} access for ``{spec.raw_asset}``.",
        "ENV": f"CRAWL_{spec.platform.upper()}", "SECRET": spec.pull.secret, "client": client,
    })


def source_resource(spec: SourceSpec) -> dg.ConfigurableResource:
    """The resource of a platform (key = the platform), configured from the environment."""
    if spec.resource:
        return resolve(spec.resource)()
    return resource_class(spec).from_env()
