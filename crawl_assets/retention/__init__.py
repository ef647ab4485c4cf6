"""Per-tenant retention of raw data, normalized tables and the index (``retention.yaml``), enforced by
the ``retention`` asset on a daily schedule."""

from crawl_assets.retention.enforce import RetentionReport, enforce
from crawl_assets.retention.policy import RetentionPolicy, TenantRetention, load_policy, policy_path

__all__ = ["RetentionPolicy", "RetentionReport", "TenantRetention", "enforce", "load_policy", "policy_path"]
