"""One run worker (a pod a run launcher started): ``python -m crawl_assets_tests.shared.sync_worker PLATFORM
KEY...`` runs ``<platform>_sync_batch`` over the keys in this process, with the instance its environment
names (Postgres), the lake ``CRAWL_LAKE`` names (S3), the registry ``CRAWL_REGISTRY`` names (S3) and the index
``CRAWL_ES_URL`` names. It prints ``started`` once Dagster is loaded, waits for a line on stdin, and prints ``finished <success>``."""

from __future__ import annotations

import sys


def main(platform: str, keys: list[str]) -> int:
    import dagster as dg

    from crawl_assets.definitions import build_definitions
    from crawl_assets.orchestration.run_names import batch_op_name

    job = build_definitions().resolve_job_def(f"{platform}_sync_batch")
    print("started", flush=True)
    sys.stdin.readline()  # "go": the test starts the workers of one "tick" together
    with dg.DagsterInstance.get() as instance:
        result = job.execute_in_process(run_config={"ops": {batch_op_name(platform): {"config": {"partitions": keys}}}},
                                        instance=instance, raise_on_error=False, tags={"crawl/platform": platform})
    print("finished", result.success, flush=True)
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
