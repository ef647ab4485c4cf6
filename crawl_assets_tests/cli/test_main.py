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
