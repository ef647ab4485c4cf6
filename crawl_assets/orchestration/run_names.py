"""The names a sync run carries, shared by the jobs that set them and the sensors, monitoring and CLI that
read them: job and batch-op names, the platform tag, the batch op's config field."""

from __future__ import annotations

BATCH_CONFIG_FIELD = "partitions"
PLATFORM_TAG = "crawl/platform"


def sync_job_name(platform: str, indexing: bool = True) -> str:
    """The job that syncs one source of ``platform`` (the one the README's UI backfill uses)."""
    return f"{platform}_sync" if indexing else f"{platform}_sync_no_index"


def batch_op_name(platform: str, include_index: bool = True) -> str:
    return f"{platform}_sync_sources" + ("" if include_index else "_no_index")
