"""Per-tenant credentials for every platform: one environment variable per (tenant, credential name).

A registry entry names a credential (``credential: main``); the secret is looked up for *the entry's
tenant*, so two tenants that both say ``main`` never get each other's secret::

    CRAWL_INTERCOM_ACCESS_TOKEN                 tenant "default", no credential name
    CRAWL_INTERCOM_ACCESS_TOKEN__ACME           tenant "acme", no credential name
    CRAWL_INTERCOM_ACCESS_TOKEN__ACME__SUPPORT  tenant "acme", credential "support"

Tenant and credential names are upper-cased with ``-`` written as ``_``. That is injective over every
registry the project accepts: a tenant name has no two separators in a row and none at the end, a
credential name no ``__``, so ``__`` always separates the parts; and two tenants that would share a part
(``a-b`` and ``a_b``) are refused together by the registry (``crawl_assets.registry.validate``). Values
stay ``EnvVar`` so they never enter run config. X and Telegram use the same scheme as the REST sources.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg
from pydantic import Field

from crawl_assets import settings
from crawl_assets.names import env_part, secret_variable
from crawl_assets.sdk.errors import MissingCredential  # raised here; plain, so collectors catch it without Dagster

__all__ = ["MissingCredential", "TenantSecret", "credential_key", "secret_var", "secrets_from_env", "plain",
           "pick_secret"]


class TenantSecret(dg.Config):
    """One secret of one tenant; ``value`` should be a ``dg.EnvVar``."""

    tenant: str = Field(description="The tenant allowed to use it.")
    name: str = Field("", description="The credential name registry entries use ('' = the tenant's default).")
    value: str = Field(description="The secret; use EnvVar.")


_part = env_part


def credential_key(tenant: str, name: str | None) -> str:
    """One string naming a tenant's credential (``acme:alice``; ``acme:`` is the tenant's default)."""
    return f"{tenant}:{name or ''}"


secret_var = secret_variable  # the variable holding a tenant's credential (the rule lives in names, Dagster-free)


def secrets_from_env(base: str, environ: Mapping[str, str] | None = None, *, resolve: bool = False) -> list[TenantSecret]:
    """Every set ``base[__TENANT[__NAME]]`` variable as an ``EnvVar``-valued ``TenantSecret`` (Dagster
    resources), or with the value itself when ``resolve`` (a plain process such as the webhook receiver).
    ``environ`` defaults to the process environment (``settings.environment``, the one place it is read)."""
    env = settings.environment() if environ is None else environ
    out: list[TenantSecret] = []
    for var in sorted(env):
        if not env.get(var) or not (var == base or var.startswith(base + "__")):
            continue
        rest = var[len(base) + 2:].split("__") if var != base else []
        if len(rest) > 2 or any(not p for p in rest):
            continue
        tenant = rest[0].lower() if rest else "default"
        name = rest[1].lower() if len(rest) == 2 else ""
        out.append(TenantSecret(tenant=tenant, name=name, value=env[var] if resolve else dg.EnvVar(var)))
    return out


def plain(value: Any) -> str:
    """A secret's value whether it came resolved (inside a run) or as an ``EnvVar`` (outside one)."""
    return (value.get_value() or "") if isinstance(value, dg.EnvVar) else str(value or "")


def pick_secret(secrets: list[TenantSecret], base: str, tenant: str, name: str | None) -> str:
    """The secret of exactly (tenant, name); never another tenant's, never a default of another name."""
    wanted = (_part(tenant), _part(name or ""))
    for secret in secrets:
        if (_part(secret.tenant), _part(secret.name)) == wanted:
            value = plain(secret.value)
            if value:
                return value
    what = f"credential {name!r}" if name else "the default credential"
    raise MissingCredential(f"{what} of tenant {tenant!r} is not configured: set {secret_var(base, tenant, name)}")
