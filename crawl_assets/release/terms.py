"""What each platform's terms allow a release to carry (its spec's ``release_terms``, from the catalog): full
records, or only their ids ("dehydrated"). A platform that declares nothing is released as ids only."""

from __future__ import annotations

from crawl_assets.core import catalog
from crawl_assets.core.catalog import ReleaseTerms

UNKNOWN = ReleaseTerms(True, "No terms declared for this platform: released as ids only.")


def terms_of(platform: str) -> ReleaseTerms:
    spec = catalog.catalog().specs.get(platform)
    return (spec.release_terms if spec is not None else None) or UNKNOWN
