"""The index stage (``stage.py``): what a source has not indexed yet and its load of records and edges into
Elasticsearch. Light: the definitions import only this message."""

MISSING_CLUSTER = (
    "no Elasticsearch cluster is configured: set CRAWL_ES_URL (e.g. http://localhost:9200; "
    "`docker compose up -d es-0 es-1 es-2` starts a cluster) and reload the code location"
)
