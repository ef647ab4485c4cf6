"""What every source type builds on: one HTTP kit (``http``: the request loop, its pacing strategies and capped
reads; ``errors``: what can go wrong and how an API's answers are sorted, as data); the shared collector
(``sync``); export files and id lists under the tenant's import root (``exports``,
``id_lists``); per-tenant secrets (``tenant_secrets``) and the REST resource built from a ``PullSpec``
(``rest_resource``).

Nothing here knows a platform. Only the two resource modules import Dagster (secrets reach code only through
``ConfigurableResource``); a platform's client subclasses :class:`crawl_assets.sdk.http.HttpClient` with one
method per endpoint and, where its API differs, its own ``ErrorRules`` and pacing.
"""
