"""The enrichment tests that index reach the session's real Elasticsearch node through ``es`` (a wiped
cluster and a tenant of their own), like the index tests."""

from crawl_assets_tests.index.conftest import es  # noqa: F401 (fixture)
