"""The README's "Registering a real source" commands work literally on a fresh shell (no DAGSTER_HOME set):
the export file lands in the import root the CLI uses, and ``sources add`` accepts it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from crawl_assets.cli.demo import sample_file

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_export_file_commands_of_the_readme_work_as_written(tmp_path):
    section = README.read_text().split("## Registering a real source", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1).replace("\\\n", " ")
    wanted = [line for line in block.splitlines()
              if line.startswith(("export DAGSTER_HOME", "mkdir -p")) or "--kind export_file" in line]
    assert len(wanted) >= 2, block
    (tmp_path / "exports").mkdir()
    shutil.copyfile(sample_file("x_archive_tweets.js"), tmp_path / "exports" / "tweets.js")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER_HOME", "CRAWL_"))}
    env.update(HOME=str(tmp_path), PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}")
    done = subprocess.run(["bash", "-euc", "\n".join(wanted)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".crawl_home" / "imports" / "default" / "tweets.js").is_file()
    assert "name: my-archive" in (tmp_path / ".crawl_home" / "sources.yaml").read_text()
