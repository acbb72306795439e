"""The import graph of disklab, read by grimp as lint-imports reads it (every import statement,
the ones inside functions too): no module imports, through any chain, a module that imports it.

A cycle makes import order matter and hides which of two modules is the lower layer; import-
linter's acyclic_siblings contract (no-cycles in pyproject.toml) reports cycles between sibling
packages, this test between any two modules, and prints the chain.
"""

from __future__ import annotations

import grimp


def import_cycles(graph: grimp.ImportGraph) -> list[tuple[str, ...]]:
    """Each cycle once, as the modules of its shortest chain, starting at its smallest name."""
    found: set[tuple[str, ...]] = set()
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back:
                cycle = (importer, *back[:-1])  # importer -> imported -> ... -> (importer)
                start = cycle.index(min(cycle))
                found.add(cycle[start:] + cycle[:start])
    return sorted(found)


def test_the_cycle_finder_names_the_chain() -> None:
    graph = grimp.ImportGraph()
    for module in ("p", "p.a", "p.b", "p.c", "p.d"):
        graph.add_module(module)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.c")
    graph.add_import(importer="p.c", imported="p.a")
    graph.add_import(importer="p.c", imported="p.d")
    assert import_cycles(graph) == [("p.a", "p.b", "p.c")]


def test_no_import_cycles_among_disklab_modules() -> None:
    cycles = import_cycles(grimp.build_graph("disklab", cache_dir=None))
    assert not cycles, "import cycles:\n" + "\n".join(
        " -> ".join((*cycle, cycle[0])) for cycle in cycles)
