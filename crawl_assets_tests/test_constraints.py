"""constraints.txt pins every requirement of pyproject.toml (default and the extras it was resolved for) within
its range, and every documented install uses it: then pip never backtracks (issue 31; bench/install.py)."""

from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from crawl_assets_tests.conftest import REPO

RESOLVED_EXTRAS = ("dev", "k8s", "bench", "s3", "langeval")  # hf is installed by hand (torch), see the file


def pins() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", line)
        assert m, f"constraints.txt: not NAME==VERSION: {line!r}"
        name = canonicalize_name(m.group(1))
        assert name not in out, f"constraints.txt pins {name} twice"
        out[name] = m.group(2)
    return out


def requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    found = [Requirement(r) for r in project["dependencies"]]
    for extra in RESOLVED_EXTRAS:
        found += [Requirement(r) for r in project["optional-dependencies"][extra]]
    return [r for r in found if canonicalize_name(r.name) != "crawl-assets"]


def test_every_requirement_is_pinned_within_its_range():
    pinned = pins()
    missing = [str(r) for r in requirements() if canonicalize_name(r.name) not in pinned]
    assert not missing, f"not in constraints.txt (run .ci/refresh-constraints): {missing}"
    outside = [f"{r} (pinned {pinned[canonicalize_name(r.name)]})" for r in requirements()
               if not r.specifier.contains(pinned[canonicalize_name(r.name)], prereleases=True)]
    assert not outside, f"constraints.txt pins outside pyproject.toml's range (run .ci/refresh-constraints): {outside}"


def test_every_documented_install_uses_the_constraints():
    readme = (REPO / "README.md").read_text()
    assert 'pip install -c constraints.txt -e . && crawl-assets demo' in readme
    assert 'pip install -c constraints.txt -e ".[dev]" && python -m pytest' in readme
    assert '-c constraints.txt -e ".[dev]"' in (REPO / ".ci" / "run").read_text()
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "constraints.txt" in dockerfile.split("RUN pip install")[0] and "-c constraints.txt" in dockerfile
    docs = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "crawl_assets").rglob("README.md"))]
    unpinned = [f"{p.relative_to(REPO)}: {cmd}" for p in docs for cmd in re.findall(r"pip install [^\n`]*", p.read_text())
                if "-c constraints.txt" not in cmd]
    assert not unpinned, unpinned
