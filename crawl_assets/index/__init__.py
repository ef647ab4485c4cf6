"""Elasticsearch layer: index naming, templates, versioning, the bulk sink, dead letters, index setup and read-back.

Entry points (import from the modules; this package re-exports nothing, so importing it stays cheap):

- ``sink.index_documents(client, docs, family=..., tenant=..., deadletter_root=..., run_id=...) -> SinkStats``
- ``indices.setup_indices(client, tenants, retention_months=None)`` (idempotent)
- ``indices.count_documents(client, tenant, source=None, family="records", include_tombstones=False)``
- ``replay.replay_deadletters(client, lake_root, ...)``; ``erasure.erase_documents(client, tenant, ids)``
- ``migrate.migrate_index`` (run by ``setup_indices``); ``reindex.reindex(client, logical, family, tenant)``
- the read side (queries, the API's answers, exports) is ``crawl_assets.query``
- Kibana saved objects: ``kibana/crawl_overview.ndjson`` (Stack Management > Saved objects > Import)
"""
