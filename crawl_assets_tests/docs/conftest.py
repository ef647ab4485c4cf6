"""The demo's world: the home ``crawl-assets demo`` made without a cluster (the README's quick start), as the
session's ``demo_home`` left it (``crawl_assets_tests/worlds.py``: run once per session, shared with the demo's
and the UI's tests); each user copies it (``shutil.copytree``) and changes only the copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawl_assets_tests.worlds import DemoHome


@pytest.fixture(scope="session")
def demo_home(demo_home: DemoHome) -> Path:
    assert demo_home.returncode == 0, f"the demo failed to build its world: {demo_home.stderr[-3000:]}"
    return demo_home.pristine
