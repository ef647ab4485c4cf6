"""After an erasure nothing personal of the erased author stays in the Dagster instance: materialization
metadata (the records preview), observations and logs hold no handle, author id or text of anyone, nor the
keys or ids of their records (issue 30, item 12: the preview named them by key, and the event log is not
erased)."""

from __future__ import annotations

import json

import dagster as dg
import pyarrow.parquet as pq
from click.testing import CliRunner

from crawl_assets import settings
from crawl_assets.cli.demo import register_samples
from crawl_assets.cli.main import cli
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets_tests.erasure.test_erase import _sync_all


def _event_log_text(instance: dg.DagsterInstance) -> str:
    out = []
    for run in instance.get_runs():
        # readable text (no \\u escapes), without the backslashes Markdown escaping puts before "_" or "|"
        out += [json.dumps(json.loads(dg.serialize_value(event)), ensure_ascii=False).replace("\\", "")
                for event in instance.all_logs(run.run_id)]
    return "\n".join(out)


def test_an_erased_author_leaves_no_handle_id_or_text_in_the_instance(dagster_home):
    keys = register_samples(settings.registry_path())
    _sync_all([k for k in keys if k.endswith(".sample-search")])
    lake = Lake(settings.lake_root())
    rows = []
    for path in lake.fs.glob(lake.path("tables/normalized_records/demo/x/*/*.parquet")):
        with lake.fs.open(path, "rb") as fh:
            rows += list(arrow_to_records(pq.read_table(fh)))
    newest = sorted(rows, key=lambda r: str(r["created_at"]), reverse=True)[:5]  # what a preview shows
    author = next(r["author_id"] for r in newest if r["author_handle"])
    theirs = [r for r in rows if r["author_id"] == author]
    handles = {r["author_handle"] for r in theirs if r["author_handle"]}
    texts = {" ".join(r["text"].split())[:20] for r in theirs if r["text"] and len(r["text"]) >= 12}
    assert author and handles and texts

    result = CliRunner().invoke(cli, ["erase", "--tenant", "demo", "--author", f"x:{author}"])
    assert result.exit_code == 0, result.output

    logged = _event_log_text(dg.DagsterInstance.get())
    assert "normalized_records" in logged and "preview" in logged, "the search looks at the right events"
    for value in handles | texts:
        assert value not in logged, f"{value!r} is still in the instance's event log"
    assert f'"{author}"' not in logged and f"| {author} |" not in logged
    for row in theirs:
        assert row["key"] not in logged and row["native_id"] not in logged, \
            f"the erased record {row['key']} is still named in the instance's event log"
