"""Where retention is declared: ``retention.yaml`` next to the source registry (or ``CRAWL_RETENTION``)::

    tenants:
      acme: {raw_days: 30, normalized_days: 365, index_months: 12}
      research: {raw_days: 90}

A missing file, tenant or field means "keep forever". Raw data never outlives its normalized records:
a part would be re-derived from it, so raw expires at ``min(raw_days, normalized_days)``.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from crawl_assets import settings
from crawl_assets.core import names
from crawl_assets.registry.validate import RegistryFileError, read_registry_bytes
from crawl_assets.registry.yaml_safe import AnchorRefused, safe_load


class TenantRetention(BaseModel):
    model_config = ConfigDict(extra="forbid")

    raw_days: int | None = Field(None, ge=1, description="Raw batches older than this (collection time) are deleted.")
    normalized_days: int | None = Field(None, ge=1, description="Normalized parts (and their raw) older than this.")
    index_months: int | None = Field(None, ge=1, description="Monthly indices older than this many months.")

    @property
    def raw_expiry_days(self) -> int | None:
        days = [d for d in (self.raw_days, self.normalized_days) if d is not None]
        return min(days) if days else None


class RetentionPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tenants: dict[str, TenantRetention] = Field(default_factory=dict)

    @field_validator("tenants")
    @classmethod
    def _tenant_names(cls, value: dict[str, TenantRetention]) -> dict[str, TenantRetention]:
        for tenant in value:
            names.check_tenant(tenant)
        return value

    def for_tenant(self, tenant: str) -> TenantRetention:
        return self.tenants.get(tenant, TenantRetention())


def policy_path() -> Path:
    """``CRAWL_RETENTION``, else ``retention.yaml`` next to the registry (``crawl_assets.settings``)."""
    return settings.retention_path()


def load_policy(path: str | os.PathLike[str] | None = None) -> RetentionPolicy:
    """The policy file (empty policy when there is none); a bad file raises naming the file and field."""
    file = Path(path) if path else policy_path()
    if not file.exists():
        return RetentionPolicy()
    try:
        data = safe_load(read_registry_bytes(file)) or {}  # bounded, no anchors or aliases: like the registry
        return RetentionPolicy.model_validate(data)
    except RegistryFileError as exc:
        raise ValueError(f"invalid retention policy: {exc}") from None
    except AnchorRefused as exc:
        raise ValueError(f"{file}: invalid retention policy: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"{file}: invalid retention policy: {exc}") from None
