"""Rules of the code's shape that import-linter cannot see, measured on the source text (``ast``).

Each rule lists the places that still break it (``ALLOWED``): a place that is fixed must leave its list
(``test_rules.py`` fails on a listed place that no longer breaks the rule), so the lists only shrink.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "crawl_assets"
MAX_LINES = 400
LAKE_AREAS = ("raw", "tables", "quarantine", "index_state", "state", "media", "landing", "deadletter", "erasure")
_AREA_LITERAL = re.compile(rf"^(?:{'|'.join(LAKE_AREAS)})/")
TELETHON_PRIVATE = frozenset({"_call", "_sender", "_self_id", "_log"})


@dataclass(frozen=True)
class Place:
    path: str  # relative to the repository
    what: str

    def __str__(self) -> str:
        return f"{self.path}: {self.what}"


def python_files(*roots: str) -> Iterator[Path]:
    for root in roots:
        yield from sorted(p for p in (REPO / root).rglob("*.py") if "__pycache__" not in p.parts)


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def long_files() -> set[str]:
    """Python files over ``MAX_LINES`` lines in the package, the tests and the benches."""
    return {rel(p) for p in python_files("crawl_assets", "crawl_assets_tests", "bench")
            if len(p.read_text().splitlines()) > MAX_LINES}


def _strings(tree: ast.AST) -> Iterator[str]:
    """Every string constant, and the literal start of every f-string."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            yield str(node.values[0].value)


def lake_leaks() -> set[str]:
    """Modules outside the lake package that reach its filesystem (``.fs``) or spell a lake area's path."""
    out = set()
    for path in python_files("crawl_assets"):
        if "lake" in path.relative_to(PACKAGE).parts[:-1]:
            continue
        tree = _tree(path)
        if any(isinstance(n, ast.Attribute) and n.attr == "fs" for n in ast.walk(tree)):
            out.add(f"{rel(path)}: .fs")
        if any(_AREA_LITERAL.match(s) for s in _strings(tree)):
            out.add(f"{rel(path)}: area path")
    return out


def environment_reads() -> set[str]:
    """Modules that read the process environment (``os.environ``, ``os.getenv``)."""
    out = set()
    for path in python_files("crawl_assets"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv") \
                    and isinstance(node.value, ast.Name) and node.value.id == "os":
                out.add(rel(path))
    return out


def dagster_private_imports() -> set[str]:
    """Files importing Dagster's private modules (``dagster._...``)."""
    out = set()
    for path in python_files("crawl_assets", "crawl_assets_tests", "bench"):
        for node in ast.walk(_tree(path)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n.startswith("dagster._") for n in names):
                out.add(rel(path))
    return out


def telethon_private_use() -> set[str]:
    """Product code defining or reaching Telethon's private members (``_call``, ``_sender``, ``_self_id``,
    ``_log``), or carrying a test hook into the Telegram resource (``sender_factory``)."""
    out = set()
    for path in python_files("crawl_assets"):
        tree = _tree(path)
        if "telethon" not in path.read_text() and "telegram" not in path.parts:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in TELETHON_PRIVATE:
                out.add(f"{rel(path)}: .{node.attr}")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in TELETHON_PRIVATE:
                out.add(f"{rel(path)}: def {node.name}")
            elif isinstance(node, (ast.Name, ast.arg)) and getattr(node, "id", getattr(node, "arg", "")) == "sender_factory":
                out.add(f"{rel(path)}: sender_factory")
    return out


def platform_literals(platforms: set[str], formats: set[str]) -> set[str]:
    """Product modules outside ``crawl_assets/sources/<platform>/`` holding a platform's or a format's name
    as a string constant (the platform list is data of the source specs, not spelled out elsewhere)."""
    out = set()
    names = platforms | formats
    for path in python_files("crawl_assets"):
        parts = path.relative_to(PACKAGE).parts
        if parts[0] == "sources" and len(parts) > 2 and parts[1] in platforms:
            continue
        if any(s in names for s in _strings(_tree(path))):
            out.add(rel(path))
    return out


def classes_named_twice() -> set[str]:
    """Class names defined in more than one product module (a reader cannot tell which one a name means)."""
    where: dict[str, list[str]] = {}
    for path in python_files("crawl_assets"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(rel(path))
    return {name for name, files in where.items() if len(files) > 1}


def renamed_class_imports() -> set[str]:
    """Product modules importing a class of ours under another class's name (``Settings as Config``)."""
    out = set()
    for path in python_files("crawl_assets"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("crawl_assets"):
                for alias in node.names:
                    if alias.asname and alias.asname != alias.name and alias.name[:1].isupper() and alias.name != alias.name.upper():
                        out.add(f"{rel(path)}: {alias.name} as {alias.asname}")
    return out


def deletion_marker_spellings() -> set[str]:
    """Product modules spelling the raw deletion line's marker (one constant, ``normalize/build.py: DELETED``)."""
    return {rel(path) for path in python_files("crawl_assets") if "crawl_assets.deleted" in _strings(_tree(path))}


_CITATION = re.compile(r"crawl_assets_tests/|\bbench/\w|\b[Ii]ssue \d+|\btest_\w+\.py")


def notes_citing_tests() -> set[str]:
    """Product modules whose comments or docstrings cite tests, benchmark scripts or issues (the code says what
    it does and why; evidence and figures belong in docs/)."""
    return {rel(path) for path in python_files("crawl_assets") if _CITATION.search(path.read_text(encoding="utf-8"))}
