"""``sources add`` reads an export file with the source's own normalization options (``timezone``,
``languages``), refuses bad options, and refuses a file that gives no record at all; a bad option edited
into the registry pauses the source at sync; the raw step counts records with the stored options."""

from __future__ import annotations

import dagster as dg
from click.testing import CliRunner

from crawl_assets.cli.main import cli
from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry, load_registry
from crawl_assets.registry.store import Registry
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.sources.export_file.collect import ingest_export_file
from crawl_assets.sources.export_file.stats import export_record_stats
from crawl_assets.sdk.exports import tenant_import_root
from crawl_assets_tests.normalize.shapes import export_file, export_message

SERVICE = {"id": 9, "type": "service", "date": "2019-04-30T08:00:00", "actor": "Sample Channel",
           "actor_id": "channel1987654321", "action": "pin_message", "message_id": 10, "text": ""}


def _old_export_with_service_messages() -> bytes:
    """Telegram Desktop before ``date_unixtime``: local times only, read right only with the export's time zone."""
    return export_file(SERVICE, export_message(10, "صبح بخیر", unixtime=None, date="2019-05-01T12:34:56"),
                       {**SERVICE, "id": 11}, export_message(12, "Good morning", unixtime=None, date="2019-05-01T12:40:00"))


def _add(registry, *options: str):
    args = ["sources", "add", "--platform", "telegram", "--kind", "export_file", "--identifier", "result.json",
            "--name", "old", "--registry", str(registry)]
    return CliRunner().invoke(cli, args + [a for o in options for a in ("--option", o)])


def test_add_reads_the_export_with_its_options_and_refuses_bad_ones(tmp_path):
    (tenant_import_root("default")).mkdir(parents=True)
    (tenant_import_root("default") / "result.json").write_bytes(_old_export_with_service_messages())
    registry = tmp_path / "sources.yaml"

    no_zone = _add(registry)  # only service messages read and every post rejected: the sync would give nothing
    assert no_zone.exit_code == 2 and "field 'options.timezone'" in no_zone.output, no_zone.output
    assert "options.format" not in no_zone.output, "the format is right: only the time zone is missing"
    for bad, field in (("timezone=Mars/Olympus", "options.timezone"), ("languages=english", "options.languages")):
        refused = _add(registry, "timezone=Asia/Tehran", bad)
        assert refused.exit_code == 2 and f"field '{field}'" in refused.output, refused.output
    assert not registry.exists() or "old" not in registry.read_text()

    ok = _add(registry, "timezone=Asia/Tehran", "languages=fa,en")
    assert ok.exit_code == 0, ok.output
    assert load_registry(registry).by_key()["default.telegram.old"].options["timezone"] == "Asia/Tehran"


def test_the_raw_step_counts_records_with_the_stored_options(tmp_path):
    (tenant_import_root("acme")).mkdir(parents=True)
    (tenant_import_root("acme") / "result.json").write_bytes(_old_export_with_service_messages())
    lake = Lake(str(tmp_path / "lake"))
    entry = SourceEntry(name="old", tenant="acme", platform="telegram", kind="export_file", identifier="result.json",
                        options={"timezone": "Asia/Tehran"})
    ingest = ingest_export_file(entry, Registry(path=tmp_path / "sources.yaml"), lake, "run1")
    stats = export_record_stats(lake, ingest.batch)
    assert stats["records_fetched"] == stats["records_new"] == 2


def test_a_bad_option_in_the_registry_pauses_the_source_at_sync(tmp_path):
    from crawl_assets.orchestration.assets import raw_asset
    from crawl_assets.sources.telegram.resource import TelegramResource

    (tenant_import_root("acme")).mkdir(parents=True)
    (tenant_import_root("acme") / "result.json").write_bytes(_old_export_with_service_messages())
    registry = tmp_path / "sources.yaml"
    registry.write_text("sources:\n  - {name: old, tenant: acme, platform: telegram, kind: export_file, "
                        "identifier: result.json, options: {timezone: Mars/Olympus}}\n")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("telegram_sources", ["acme.telegram.old"])
        result = dg.materialize([raw_asset("telegram")], partition_key="acme.telegram.old", instance=instance,
                                raise_on_error=False,
                                resources={"lake": LakeResource(root=str(tmp_path / "lake")),
                                           "registry": RegistryResource(path=str(registry)),
                                           "telegram": TelegramResource.from_env()})
    assert not result.success
    entry = load_registry(registry).by_key()["acme.telegram.old"]
    assert entry.paused and "options.timezone" in (entry.status_reason or "")


def test_a_format_mismatch_names_the_flag_of_each_command():
    from crawl_assets.cli.demo import sample_file
    from crawl_assets.normalize.sniff import mismatch

    reason = mismatch("x-v2", sample_file("x_archive_tweets.js").read_bytes()[:4096])
    assert "use --format x-archive (crawl-assets normalize)" in reason
    assert "--option format=x-archive (crawl-assets sources add)" in reason
