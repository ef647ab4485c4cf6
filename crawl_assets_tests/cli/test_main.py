import subprocess
import sys

from crawl_assets_tests.conftest import REPO

PROBE = """
import sys
from click.testing import CliRunner
from crawl_assets.cli.main import cli
result = CliRunner().invoke(cli, {args!r})
assert result.exit_code == 0, result.output
print(sorted(m for m in ("dagster", "elasticsearch", "pyarrow", "telethon") if m in sys.modules))
"""


def loaded_by(*args: str) -> str:
    out = subprocess.run([sys.executable, "-c", PROBE.format(args=list(args))], capture_output=True, text=True,
                         timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_light_commands_do_not_load_heavy_libraries():
    assert loaded_by("schema") == "[]"
    assert loaded_by("normalize", "--help") == "[]"


def test_es_commands_do_not_load_dagster():
    """The cluster's commands (setup, stats, replay, reindex) build their client from the settings alone."""
    assert "'dagster'" not in loaded_by("es", "stats", "--help")


def test_help_lists_every_command():
    listing = subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", "--help"], capture_output=True,
                             text=True, timeout=120, cwd=REPO).stdout
    for name in ("demo", "es", "normalize", "schema", "sources", "status", "telegram", "ui", "webhooks"):
        assert f"  {name} " in listing


def test_the_definitions_and_the_lake_reader_do_not_load_the_es_client():
    """``crawl-assets records`` and discovery read the lake without Elasticsearch; the code location loads without it."""
    code = ("import sys, crawl_assets.definitions, crawl_assets.pipeline.reader, crawl_assets.pipeline.discovery, "
            "crawl_assets.cli.records; print('elasticsearch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"
