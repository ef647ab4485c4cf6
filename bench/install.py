"""Set-up time from nothing: a fresh virtualenv, an empty pip cache, the README's commands as written.

In a copy of the repository (the files git knows, untracked ones included) with an empty ``PIP_CACHE_DIR``
and ``HOME``, it runs the README's quick-start command (venv, ``pip install -c constraints.txt -e .``,
``crawl-assets demo``; set-up and demo timed apart), then the README's test set-up (``pip install -c
constraints.txt -e ".[dev]"``, the part before ``&& python -m pytest``). Per step: minutes, the virtualenv's
size, and what pip's log says about backtracking ("pip is looking at multiple versions", "This is taking
longer than usual"). Peer (``--unpinned``): the command the README gave before constraints.txt, ``pip install
-e ".[dev]"`` without pins, in its own fresh virtualenv (issue 31 measured it at 17.5 minutes).

    python bench/install.py [--unpinned] [--keep]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL_MINUTES = 5.0
BACKTRACKING = ("pip is looking at multiple versions of", "This is taking longer than usual")


def readme_block(heading: str, index: int = 0) -> str:
    """The ``index``-th bash block after the README heading that starts with ``heading``, joined to one line."""
    text = (REPO / "README.md").read_text()
    section = text[text.index(f"## {heading}"):]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    return blocks[index].replace("\\\n", " ").strip()


def copy_repository(target: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        source = REPO / rel
        if source.is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / rel)


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


class Step:
    def __init__(self, work: Path, env: dict[str, str]) -> None:
        self.work, self.env = work, env

    def run(self, name: str, command: str, cwd: Path) -> tuple[float, str]:
        """Run ``command`` with bash in ``cwd``; (minutes, what pip's log says about backtracking)."""
        log = self.work / f"pip-{name}.log"
        started = time.monotonic()
        done = subprocess.run(["bash", "-c", command], cwd=cwd, env={**self.env, "PIP_LOG": str(log)},
                              capture_output=True, text=True)
        minutes = (time.monotonic() - started) / 60
        if done.returncode != 0:
            sys.exit(f"{name}: `{command}` failed ({done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}")
        text = log.read_text(errors="replace") if log.exists() else ""
        hits = {m: text.count(m) for m in BACKTRACKING if m in text}
        said = ", ".join(f"{n}x '{m}'" for m, n in hits.items()) or ("none" if text else "-")
        return minutes, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unpinned", action="store_true", help="Also run the peer: pip install -e '.[dev]' unpinned.")
    parser.add_argument("--keep", action="store_true", help="Keep the work folder (printed).")
    args = parser.parse_args()

    setup = readme_block("Quick start")
    tests = readme_block("Quick start", 1)
    assert setup.endswith("&& crawl-assets demo"), setup
    assert tests.endswith("&& python -m pytest"), tests
    install, tests_install = setup.removesuffix("&& crawl-assets demo").strip(), tests.removesuffix("&& python -m pytest").strip()

    work = Path(tempfile.mkdtemp(prefix="crawl-install-bench-"))
    (work / "home").mkdir()
    repo = work / "repo"
    copy_repository(repo)
    keep = {"PATH", "LANG", "LC_ALL", "TMPDIR", "http_proxy", "https_proxy", "no_proxy", "PIP_INDEX_URL"}
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update({"HOME": str(work / "home"), "PIP_CACHE_DIR": str(work / "pip-cache"), "PIP_NO_INPUT": "1",
                "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if "/.venv/" not in p)
    step = Step(work, env)
    rows: list[tuple[str, float, str, str]] = []
    try:
        minutes, said = step.run("setup", install, repo)
        rows.append((f"README set-up: {install}", minutes, f"{size(repo / '.venv') / 2**20:,.0f} MiB", said))
        demo, _ = step.run("demo", ". .venv/bin/activate && crawl-assets demo", repo)
        rows.append(("crawl-assets demo", demo, "", ""))
        rows.append((f"set-up + demo (goal <= {GOAL_MINUTES:.0f} min)", minutes + demo, "", ""))
        minutes, said = step.run("tests", f". .venv/bin/activate && {tests_install}", repo)
        rows.append((f"README test set-up: {tests_install}", minutes, f"{size(repo / '.venv') / 2**20:,.0f} MiB", said))
        if args.unpinned:
            peer = work / "peer"
            copy_repository(peer)
            shutil.rmtree(work / "pip-cache", ignore_errors=True)  # empty again
            command = 'python3.11 -m venv .venv && . .venv/bin/activate && pip install -e ".[dev]"'
            minutes, said = step.run("unpinned", command, peer)
            rows.append((f"peer, unpinned: {command}", minutes, f"{size(peer / '.venv') / 2**20:,.0f} MiB", said))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"bench/install.py: {sys.version.split()[0]}, {os.cpu_count()} cores, empty pip cache and HOME, "
          f"{time.strftime('%Y-%m-%d')}" + (f"; kept in {work}" if args.keep else ""))
    print(f"{'step':<86} {'minutes':>8} {'venv':>10}  pip backtracking")
    for name, minutes, venv, said in rows:
        print(f"{name[:86]:<86} {minutes:>8.2f} {venv:>10}  {said}")


if __name__ == "__main__":
    main()
