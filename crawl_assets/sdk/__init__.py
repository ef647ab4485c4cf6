"""What every source type builds on: one HTTP kit (``http``: the request loop, ``errors``: what can go wrong
and how an API's answers are sorted, as data; ``ratelimit``: pacing strategies; ``bounded``: capped reads).

Nothing here knows a platform or Dagster: a platform's client subclasses :class:`crawl_assets.sdk.http.HttpClient`
with one method per endpoint and, where its API differs, its own ``ErrorRules`` and pacing.
"""
