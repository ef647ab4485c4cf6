"""Elasticsearch layer: index naming, templates, versioning, the bulk sink, dead letters, bootstrap."""
