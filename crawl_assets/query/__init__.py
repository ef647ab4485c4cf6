"""The read side of the index: what the API, releases and enrichers ask Elasticsearch, and the files they
answer with.

- ``filters.RecordFilter`` / ``scoped_query``: one tenant's filter, the base of every query
- ``conversations``: a record and its thread (the API's paged search and its cursors: ``api.pages``)
- ``aggregations``, ``trends``, ``profiles``, ``networks``: counts, timelines, rising words, authors, graphs
- ``exports`` (the plan: snapshot and pages) → ``export_formats`` (its encoders: JSON lines, CSV, Parquet, XLSX)
- ``graph_formats``: GEXF, GraphML, CSV; ``csv_cells``, ``xlsx``, ``arrow_columns``: the cell encoders
- ``clauses``: the plain queries (full text, hashtags, a thread, an author's posts) and the clauses the
  filters and enrichers share; ``steps``: a query written once, run by a blocking or an asyncio client

The write side (naming, templates, the sink, index setup) is ``crawl_assets.index``; this package imports it,
never the other way.
"""
