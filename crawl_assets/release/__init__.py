"""Dataset releases: a query of a tenant's records frozen into a citable, verifiable package (docs/RELEASES.md).

``create_release`` reads the lake's normalized records and relation edges (no Elasticsearch) and writes the
package; ``verify_package`` checks one against its manifest; ``import_release`` brings one into a tenant.
"""

from crawl_assets.release.build import ReleaseSummary, create_release
from crawl_assets.release.importer import ImportReport, import_release
from crawl_assets.release.query import ReleaseQuery
from crawl_assets.release.verify import PackageInvalid, verify_package

__all__ = ["ImportReport", "PackageInvalid", "ReleaseQuery", "ReleaseSummary", "create_release", "import_release",
           "verify_package"]
