"""Step 4: route the logical compute-to-compute tree edges back onto physical paths.

Every logical edge (x, y) left by edge splitting carries an ordered ``{path: units}`` record. A
tree class of multiplicity m using (x, y) takes m units from the front of that record; when they
span several paths the class is refined into sub-classes with smaller multiplicities, so every
resulting tree has exactly one physical path per edge and the units on each path add up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from solver.algorithm.packing import TreeClass
from solver.algorithm.splitting import Path, _take

Hop = TypeVar("Hop")


def route_classes(
    classes: list[TreeClass],
    paths: dict[tuple[int, int], dict[Path, int]],
    rank_node: list[int],
) -> list[tuple[int, int, list[tuple[int, int, Path]]]]:
    """Expand classes into ``(root, mult, [(src, dst, node path)])`` with node indices.

    ``rank_node`` maps compute rank to node index (the packing works on ranks, paths on nodes).
    ``paths`` is consumed.
    """
    out = []
    for cls in classes:
        # sub-classes: list of [mult, list of routed edges]
        subs: list[tuple[int, list[tuple[int, int, Path]]]] = [(cls.mult, [])]
        for x, y in cls.edges:
            u, v = rank_node[x], rank_node[y]
            record = paths[(u, v)]
            path = next(iter(record))
            have = record[path]
            if have >= cls.mult:  # one physical path carries the whole class: no refinement
                if have == cls.mult:
                    del record[path]
                else:
                    record[path] = have - cls.mult
                for _, routed in subs:
                    routed.append((u, v, path))
                continue
            pieces = _take(record, cls.mult)
            subs = refine_over_pieces(subs, pieces, lambda path, u=u, v=v: (u, v, path))
        root = rank_node[cls.root]
        for mult, routed in subs:
            out.append((root, mult, routed))
    return out


def refine_over_pieces(
    subs: list[tuple[int, list[Hop]]], pieces: list[tuple[Path, int]], hop: Callable[[Path], Hop]
) -> list[tuple[int, list[Hop]]]:
    """Sub-classes ``(mult, hops)`` refined over ``pieces`` ``(path, units)`` taken in order:
    each sub-class takes its next ``mult`` units, split where a piece ends; every part gets
    ``hop(path)`` appended to a copy of its hops. The pieces hold exactly the sub-classes' total."""
    refined = []
    pi = 0
    p_rem = pieces[0][1]
    for mult, hops in subs:
        left = mult
        while left > 0:
            use = min(left, p_rem)
            refined.append((use, hops + [hop(pieces[pi][0])]))
            left -= use
            p_rem -= use
            if p_rem == 0 and pi + 1 < len(pieces):
                pi += 1
                p_rem = pieces[pi][1]
    return refined
