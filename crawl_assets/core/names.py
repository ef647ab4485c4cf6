"""The names users choose (tenants, source names, credential names, source keys), validated in one place.

Every check is a full match (``re.fullmatch``): ``"acme\\n"`` or ``"globex/../acme"`` is never a tenant.
Tenant names also become parts of environment variable names (``CRAWL_X_BEARER_TOKEN__ACME``), index
names and lake folders, so they are restricted a little further than other slugs: no two separators in
a row and none at the end, so ``__`` can separate the parts of a variable name unambiguously. Two tenants
whose variable parts would coincide (``a-b`` and ``a_b``) cannot both be registered (see
``crawl_assets.registry.validate``).
"""

from __future__ import annotations

import re

SLUG_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
TENANT_RE = re.compile(r"[a-z0-9](?:[a-z0-9]|[_-](?=[a-z0-9])){0,62}")
CREDENTIAL_RE = re.compile(r"[a-z](?:[a-z0-9]|_(?=[a-z0-9])){0,63}")
SLUG_RULE = "1-63 characters of lowercase letters, digits, '-' or '_', starting with a letter or digit"
TENANT_RULE = SLUG_RULE + ", with no two of '-'/'_' in a row and none at the end"
CREDENTIAL_RULE = "lowercase letters, digits and single '_', starting with a letter"


def is_slug(value: object) -> bool:
    return isinstance(value, str) and SLUG_RE.fullmatch(value) is not None


def is_tenant(value: object) -> bool:
    return isinstance(value, str) and TENANT_RE.fullmatch(value) is not None


def is_credential(value: object) -> bool:
    return isinstance(value, str) and CREDENTIAL_RE.fullmatch(value) is not None


def check_tenant(value: object) -> str:
    """``value`` when it is a valid tenant name, else ``ValueError`` saying why."""
    if not is_tenant(value):
        raise ValueError(f"invalid tenant {value!r}: {TENANT_RULE}")
    return value  # type: ignore[return-value]


def env_part(slug: str) -> str:
    """A tenant or credential name as a part of an environment variable name (``a-b`` → ``A_B``)."""
    return slug.upper().replace("-", "_")


def secret_variable(base: str, tenant: str, name: str | None) -> str:
    """The variable holding ``tenant``'s credential ``name`` (None/'' = the tenant's default):
    ``base[__TENANT[__NAME]]``, the tenant left out for tenant ``default``'s default credential."""
    parts = [base]
    if tenant != "default" or name:
        parts.append(env_part(tenant))
    if name:
        parts.append(env_part(name))
    return "__".join(parts)


def check_source_key(value: object, tenant: str | None = None) -> str:
    """A partition key ``{tenant}.{platform}.{name}`` (each part a valid name), of ``tenant`` when given."""
    parts = value.split(".") if isinstance(value, str) else []
    if len(parts) != 3 or not is_tenant(parts[0]) or not is_slug(parts[1]) or not is_slug(parts[2]):
        raise ValueError(f"invalid source key {value!r}: expected TENANT.PLATFORM.NAME")
    if tenant is not None and parts[0] != tenant:
        raise ValueError(f"source {value!r} does not belong to tenant {tenant!r}")
    return value  # type: ignore[return-value]
