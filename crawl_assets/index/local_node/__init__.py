"""A genuine single-node Elasticsearch on this machine, without Docker: the server distribution Maven fetches
from Maven Central, our analysis plugin compiled for it, a node started and stopped (``crawl-assets es local``,
and the test suite's node)."""
