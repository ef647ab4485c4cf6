"""Enrichment: model-made and computed features kept apart from observations (docs/ENRICHMENT.md).

Enrichers read normalized records and write their own tables (``features/`` in the lake) and their own
index (``crawl-features-{tenant}``), joined to records by key; records are never rewritten. No Dagster
here: ``crawl_assets.orchestration.assets.enrichment`` wraps these functions in assets, ``crawl-assets enrich`` runs one
enricher over a file.
"""

from crawl_assets.enrich.base import CombineContext, Enricher
from crawl_assets.enrich.config import ENRICHERS, EnrichmentConfigError, build, load_enrichers

__all__ = ["ENRICHERS", "CombineContext", "Enricher", "EnrichmentConfigError", "build", "load_enrichers"]
