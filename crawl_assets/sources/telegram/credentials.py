"""The environment variables of a Telegram account, without Dagster (``sources add`` checks them, the
resource reads them): ``CRAWL_TELEGRAM_{API_ID,API_HASH,SESSION,PROXY}[__TENANT[__NAME]]``."""

from __future__ import annotations

from collections.abc import Mapping

from crawl_assets.core.names import secret_variable

ENV_PREFIX = "CRAWL_TELEGRAM_"
FIELDS = ("api_id", "api_hash", "session", "proxy")
DEFAULT_TENANT = "default"

__all__ = ["DEFAULT_TENANT", "ENV_PREFIX", "FIELDS", "app_vars", "env_names", "unset_credentials"]


def env_names(tenant: str = DEFAULT_TENANT, credential: str | None = None) -> dict[str, str]:
    """The environment variables of one tenant's credential (``credential`` None: the tenant's default):
    ``CRAWL_TELEGRAM_{API_ID,API_HASH,SESSION,PROXY}[__TENANT[__NAME]]``."""
    return {f: secret_variable(f"{ENV_PREFIX}{f.upper()}", tenant, credential) for f in FIELDS}


def app_vars(tenant: str, credential: str | None, field: str, env: Mapping[str, str]) -> str:
    """The variable an ``api_id``/``api_hash``/``proxy`` is read from: the credential's own, its tenant's
    default's, or the operator's (``CRAWL_TELEGRAM_API_ID``); the first that is set (the last when none is)."""
    chain = [env_names(tenant, credential)[field], env_names(tenant, None)[field], env_names()[field]]
    return next((var for var in chain if env.get(var)), chain[-1])


def unset_credentials(entry, environ: Mapping[str, str]) -> list[str]:  # noqa: ANN001 - a registry SourceEntry
    """The session of the entry's tenant and credential (sessions never fall back) and its app's id and hash
    (the first variable of their fallback chain that is set, else the operator's), when not set; a ``web_channel``
    source reads public pages without an account."""
    if entry.kind.value == "web_channel":
        return []
    wanted = [env_names(entry.tenant, entry.credential)["session"],
              *(app_vars(entry.tenant, entry.credential, field, environ) for field in ("api_id", "api_hash"))]
    return [var for var in wanted if not environ.get(var)]
