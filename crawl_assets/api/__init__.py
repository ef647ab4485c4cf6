"""The query and analysis API (docs/API.md): the FastAPI app (``app.create_app``), keys, rate limits, cursors
and routes. No Dagster here (an import-linter contract)."""
