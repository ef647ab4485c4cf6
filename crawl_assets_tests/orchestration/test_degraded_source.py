"""A truncated export syncs (its readable part is stored, the run stays green) but reads as **degraded** everywhere
a user looks: its ``no_failed_batches`` check fails with ERROR severity on its own partition and names the
source and the first rejection's reason; the materialization says so; ``crawl-assets status`` shows the state
``degraded`` with that reason (and, an export, when it was imported rather than a lag); an unchanged re-sync
keeps it degraded (the quarantined items are still missing)."""

from __future__ import annotations

import json

import dagster as dg
from click.testing import CliRunner

from crawl_assets.cli.main import cli
from crawl_assets.sdk.exports import tenant_import_root
from crawl_assets_tests.normalize.shapes import x_page, x_tweet

KEY = "acme.x.cut"
NORMALIZED = dg.AssetKey(["x", "normalized_records"])
CUT = b'{"data": [{"id": "1790000000000000002", "text": "the rest of the exp'


def _checks(instance: dg.DagsterInstance, run_id: str) -> dict[str, dg.AssetCheckEvaluation]:
    return {e.dagster_event.event_specific_data.check_name: e.dagster_event.event_specific_data
            for e in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)}


def test_a_truncated_export_is_degraded_in_its_check_its_partition_and_status(tmp_path, dagster_home):
    imports = tenant_import_root("acme")
    imports.mkdir(parents=True)
    (imports / "cut.jsonl").write_bytes(x_page(x_tweet("1790000000000000001", "hello")) + b"\n" + CUT)
    registry = tmp_path / "sources.yaml"
    registry.write_text("sources:\n  - {name: cut, tenant: acme, platform: x, kind: export_file, "
                        "identifier: cut.jsonl, options: {format: x-v2}}\n")
    from crawl_assets.definitions import build_definitions

    job = build_definitions().resolve_job_def("x_sync_no_index")
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("x_sources", [KEY])
        for attempt in ("first", "unchanged"):
            result = job.execute_in_process(partition_key=KEY, instance=instance, raise_on_error=False)
            assert result.success, "the readable part is stored"
            check = _checks(instance, result.run_id)["no_failed_batches"]
            assert not check.passed and check.severity == dg.AssetCheckSeverity.ERROR, attempt
            assert check.partition == KEY and check.description and KEY in check.description
            assert "unexpected end of data" in check.description, check.description
            [mat] = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=NORMALIZED, asset_partitions=[KEY]), limit=1).records
            degraded = mat.asset_materialization.metadata["degraded"].value
            assert "1 of 2 items rejected" in degraded and "unexpected end of data" in degraded, attempt

            out = CliRunner().invoke(cli, ["status", "--json", "--registry", str(registry)], catch_exceptions=False)
            [row] = map(json.loads, out.output.splitlines())
            assert row["state"] == "degraded", (attempt, row)
            assert "unexpected end of data" in row["normalization_problem"]
            table = CliRunner().invoke(cli, ["status", "--registry", str(registry)], catch_exceptions=False).output
            line = next(line for line in table.splitlines() if line.startswith(KEY))
            assert line.split()[1] == "degraded" and "unexpected end of data" in line, line
            # an export has no sync lag (its newest item is as old as the file): when it was imported instead
            assert line.split()[2] == "imported" and line.split()[5] == "-" and row["lag_seconds"] is None, line
