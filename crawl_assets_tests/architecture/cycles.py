"""Import cycles between the modules of a package, from the import graph import-linter builds (``grimp``).

A cycle is a strongly connected group of modules: each reaches every other through imports, counted at
module level, inside functions and under ``TYPE_CHECKING`` alike (a cycle of names is one concept cut in
two, wherever the import sits). ``python -m crawl_assets_tests.architecture.cycles`` prints them with the
lines that close them.
"""

from __future__ import annotations

import sys

import grimp


def _graph(package: str) -> grimp.ImportGraph:
    return grimp.build_graph(package, include_external_packages=False, exclude_type_checking_imports=False,
                             cache_dir=None)


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's groups of more than one module (and a module importing itself), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in edges.get(node, ()):
                    groups.append(sorted(group))
    return sorted(groups)


def import_cycles(package: str = "crawl_assets") -> list[list[str]]:
    graph = _graph(package)
    return strongly_connected({m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules})


def _explain(package: str, groups: list[list[str]]) -> str:
    graph = _graph(package)
    lines = []
    for group in groups:
        lines.append(" <-> ".join(group))
        for importer in group:
            for imported in sorted(set(graph.find_modules_directly_imported_by(importer)) & set(group)):
                where = [d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)]
                lines.append(f"    {importer} -> {imported} (line {', '.join(map(str, where))})")
    return "\n".join(lines)


if __name__ == "__main__":
    found = import_cycles()
    print(_explain("crawl_assets", found) if found else "no import cycles")
    sys.exit(1 if found else 0)
