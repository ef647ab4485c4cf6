"""A real Elasticsearch node for the tests: the genuine server from Maven Central (``distribution``), our
test analysis plugin (``analysis_plugin``), the node's life cycle (``node``), a fault-injecting HTTP
proxy in front of it (``proxy``), index inspection and clean-up helpers (``inspect``) and the pytest
fixtures (``fixtures``). ``python -m crawl_assets_tests.es_node`` starts a node and prints its URL."""
