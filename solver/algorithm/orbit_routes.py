"""Step 4 for symmetric fabrics: route the box-0 trees once, translate the routed trees.

Switch removal by plans (:mod:`solver.algorithm.plan_split`) is σ-equivariant: the path record of
a logical edge σ^b(e) is σ^b of the record of e, path for path, in the same order. So the trees
of box b (σ^b of the box-0 trees) can take their physical paths from the records of the box-0
*templates*: a logical edge (x, y) with x in box c is routed with the record of σ^-c(x, y), whose
paths are then moved by σ^c. Every template record is consumed once per box-0 tree using its
orbit, which is exactly the number of trees crossing each edge of the orbit (see
:mod:`solver.algorithm.orbit_packing`).

A routed edge is a pair (template path, box offset); each distinct one becomes one
:class:`~solver.model.schedule.TreeEdge` (shared by every tree that uses it), so building the
forest of N trees costs array indexing per tree, and link loads come from the template paths'
multiplicities instead of a walk over every tree edge.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from solver.algorithm.paths import refine_over_pieces
from solver.algorithm.splitting import Path, _take
from solver.algorithm.symmetry import BoxSymmetry
from solver.flow.csr import IndexedFabric
from solver.model.schedule import Tree, TreeEdge

RepClass = tuple[int, int, list[tuple[int, int]]]  # (root node, multiplicity, node edges)


def routed_forest(
    fabric: IndexedFabric,
    sym: BoxSymmetry,
    reps: list[RepClass],
    paths: dict[tuple[int, int], dict[Path, int]],
    k: int,
) -> tuple[list[Tree], dict[tuple[str, str], int]]:
    """Every tree (the box-0 classes and their translates) on physical paths, and the
    multiplicity crossing each directed link (node names) for the link loads."""
    templates, routed = route_representatives(sym, reps, paths)
    table = _edge_table(fabric, sym, templates)
    names = fabric.names
    trees = []
    weights: dict[int, Fraction] = {}
    for b in range(sym.boxes):
        for root, m, tids, boxes in routed:
            edges = table[tids, (boxes + b) % sym.boxes]
            w = weights.setdefault(m, Fraction(m, k))
            trees.append(Tree(names[sym.translate(root, b)], m, w, tuple(edges.tolist())))
    per_template = np.zeros(len(templates), dtype=np.int64)
    for _, m, tids, _ in routed:
        np.add.at(per_template, tids, m)
    return trees, _link_usage(fabric, sym, templates, per_template)


Routed = tuple[int, int, np.ndarray, np.ndarray]  # (root, multiplicity, template ids, box offsets)


def representative_trees(
    fabric: IndexedFabric,
    sym: BoxSymmetry,
    reps: list[RepClass],
    paths: dict[tuple[int, int], dict[Path, int]],
    k: int,
) -> list[Tree]:
    """Only the box-0 trees on physical paths (a compressed plan's representatives)."""
    templates, routed = route_representatives(sym, reps, paths)
    names = fabric.names
    moved: dict[tuple[int, int], TreeEdge] = {}
    trees = []
    for root, m, tids, boxes in routed:
        edges = []
        for tid, c in zip(tids.tolist(), boxes.tolist()):
            edge = moved.get((tid, c))
            if edge is None:
                path = [names[sym.translate(v, c)] for v in templates[tid]]
                edge = moved[(tid, c)] = TreeEdge(path[0], path[-1], tuple(path))
            edges.append(edge)
        trees.append(Tree(names[root], m, Fraction(m, k), tuple(edges)))
    return trees


def route_representatives(
    sym: BoxSymmetry, reps: list[RepClass], paths: dict[tuple[int, int], dict[Path, int]]
) -> tuple[list[Path], list[Routed]]:
    """Template paths and the box-0 tree classes routed on them (split where a record splits).

    A routed edge is (template id, box offset c): the template moved by σ^c.
    """
    templates: list[Path] = []
    template_id: dict[Path, int] = {}
    routed = []  # (root, mult, template ids, box offsets)
    for root, mult, edges in reps:
        subs: list[tuple[int, list[tuple[int, int]]]] = [(mult, [])]
        for x, y in _breadth_first(root, edges):
            c = int(sym.box_of[x])
            record = paths[(sym.translate(x, -c), sym.translate(y, -c))]
            pieces = _take(record, mult)

            def hop(path: Path, c: int = c) -> tuple[int, int]:
                tid = template_id.get(path)
                if tid is None:
                    tid = template_id[path] = len(templates)
                    templates.append(path)
                return tid, c

            if len(pieces) == 1:  # no sub-class splits: extend the hop lists in place
                one = hop(pieces[0][0])
                for _, hops in subs:
                    hops.append(one)
            else:
                subs = refine_over_pieces(subs, pieces, hop)
        for m, hops in subs:
            arr = np.asarray(hops, dtype=np.int64).reshape(-1, 2)
            routed.append((root, m, arr[:, 0], arr[:, 1]))
    return templates, routed


def _breadth_first(root: int, edges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Tree edges ordered by depth (stable): orbit packing may attach a vertex to an earlier
    level after a deeper one, and schedules list their edges breadth-first."""
    depth = {root: 0}
    for x, y in edges:
        depth[y] = depth[x] + 1
    return sorted(edges, key=lambda e: depth[e[0]])


def _link_usage(
    fabric: IndexedFabric, sym: BoxSymmetry, templates: list[Path], per_template: np.ndarray
) -> dict[tuple[str, str], int]:
    """Multiplicity crossing each directed link: every template path moved to every box."""
    tails, heads, mults = [], [], []
    for tid, path in enumerate(templates):
        if per_template[tid]:
            tails += path[:-1]
            heads += path[1:]
            mults += [int(per_template[tid])] * (len(path) - 1)
    perms = np.stack([sym.power(b) for b in range(sym.boxes)])  # (boxes, n)
    n = fabric.n
    keys = (perms[:, tails] * n + perms[:, heads]).ravel()
    weights = np.broadcast_to(np.asarray(mults, dtype=np.int64), perms[:, tails].shape).ravel()
    uniq, inverse = np.unique(keys, return_inverse=True)
    totals = np.bincount(inverse, weights=weights).astype(np.int64)
    names = fabric.names
    return {
        (names[int(key) // n], names[int(key) % n]): int(total) for key, total in zip(uniq, totals)
    }


def _edge_table(fabric: IndexedFabric, sym: BoxSymmetry, templates: list[Path]) -> np.ndarray:
    """TreeEdge for (template path, box offset): the template moved by σ^offset."""
    names = fabric.names
    table = np.empty((len(templates), sym.boxes), dtype=object)
    for b in range(sym.boxes):
        perm = sym.power(b).tolist()
        for tid, path in enumerate(templates):
            moved = [names[perm[v]] for v in path]
            table[tid, b] = TreeEdge(moved[0], moved[-1], tuple(moved))
    return table
