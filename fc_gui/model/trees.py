"""What the designer derives from a schedule's trees: labels, rows of the trees list, which trees
use each physical link, the physical hops to draw, and the steps of the broadcast animation.

Pure functions of :class:`solver.model.schedule.Schedule` / :class:`~solver.model.schedule.Tree`
(no Qt): the solve worker computes some of them off the GUI thread, and tests call them directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from solver.model.schedule import Schedule, Tree

#: One transfer of the broadcast animation: (from node, to node, physical path).
Transfer = tuple[str, str, tuple[str, ...]]


def tree_label(root: str, index: int, phase: str | None = None) -> str:
    """``root#index``, prefixed ``RS:``/``AG:`` for the phases of an allreduce."""
    prefix = {"reduce-scatter": "RS:", "allgather": "AG:"}.get(phase or "", "")
    return f"{prefix}{root}#{index}"


def tree_hops(tree: Tree) -> int:
    """Physical links a tree occupies (sum of its edges' path lengths)."""
    return sum(len(e.path) - 1 for e in tree.edges)


@dataclass(frozen=True)
class TreeRow:
    """One row of the trees list."""

    phase: str
    root: str
    index: int  # index among the trees of this root (and phase)
    tree: Tree
    height: int
    hops: int


def tree_rows(schedule: Schedule) -> list[TreeRow]:
    """Every tree of ``schedule`` (all phases) as a row of the trees list."""
    rows = []
    counters: dict[tuple[str, str], int] = {}
    for phase, tree in schedule.all_trees():
        key = (phase, tree.root)
        idx = counters.get(key, 0)
        counters[key] = idx + 1
        rows.append(TreeRow(phase, tree.root, idx, tree, tree.height, tree_hops(tree)))
    return rows


def trees_using_links(schedule: Schedule) -> dict[tuple[str, str], list[str]]:
    """Directed physical link (u, v) -> labels ``root#index`` of the trees whose paths cross it."""
    users: dict[tuple[str, str], list[str]] = {}
    counters: dict[tuple[str, str], int] = {}
    multi = bool(schedule.phases)
    for phase, tree in schedule.all_trees():
        key = (phase, tree.root)
        idx = counters.get(key, 0)
        counters[key] = idx + 1
        label = tree_label(tree.root, idx, phase if multi else None)
        seen: set[tuple[str, str]] = set()
        for e in tree.edges:
            for a, b in zip(e.path[:-1], e.path[1:]):
                if (a, b) not in seen:
                    seen.add((a, b))
                    users.setdefault((a, b), []).append(label)
    return users


def tree_hop_pairs(tree: Tree) -> list[tuple[str, str]]:
    """Physical hops (u, v) of every edge of ``tree``, in the edges' order (data-flow direction)."""
    return [(a, b) for e in tree.edges for a, b in zip(e.path[:-1], e.path[1:])]


def path_hops(paths: Iterable[Sequence[str]]) -> list[tuple[str, str]]:
    """Every physical hop (u, v) of every path, in order."""
    return [(a, b) for p in paths for a, b in zip(p[:-1], p[1:])]


def last_hops(paths: Iterable[Sequence[str]]) -> list[tuple[str, str]]:
    """The final physical hop of each path: where an arrowhead shows the data's direction."""
    return [(p[-2], p[-1]) for p in paths if len(p) >= 2]


def broadcast_levels(trees: Sequence[tuple[str, Tree]]) -> list[list[Transfer]]:
    """The transfers of each step when ``trees`` ((phase, tree) pairs) run depth by depth.

    For allgather (out-trees) step d sends along the edges into depth d; for reduce-scatter
    (aggregation trees) the steps run from the deepest edges up to the root.
    """
    levels: list[list[Transfer]] = []
    for phase, tree in trees:
        depth = tree.depth_of()
        height = max(depth.values()) if depth else 0
        aggregate = phase == "reduce-scatter"
        for e in tree.edges:
            child = e.dst if depth.get(e.dst, 0) > depth.get(e.src, 0) else e.src
            d = depth[child]
            step = (height - d + 1) if aggregate else d
            while len(levels) < step:
                levels.append([])
            levels[step - 1].append((e.src, e.dst, e.path))
    return levels


def holders(
    trees: Sequence[tuple[str, Tree]], levels: Sequence[Sequence[Transfer]], step: int
) -> set[str]:
    """Nodes holding (a part of) the data after ``step`` steps of :func:`broadcast_levels`."""
    have: set[str] = set()
    if not any(p == "reduce-scatter" for p, _ in trees):
        have |= {t.root for _, t in trees}
    for level in levels[:step]:
        for _, dst, _ in level:
            have.add(dst)
    return have


def broadcast_step_text(
    trees: Sequence[tuple[str, Tree]], levels: Sequence[Sequence[Transfer]], step: int
) -> str:
    """``step 2/3: 4 transfers, 7/8 nodes hold data`` (partial sums sent, for reduce-scatter)."""
    current = levels[step - 1] if 0 < step <= len(levels) else []
    n_nodes = len({n for _, t in trees for n in t.depth_of()})
    if any(p == "reduce-scatter" for p, _ in trees):
        sent = {src for level in levels[:step] for src, _, _ in level}
        what = f"{len(sent)}/{n_nodes} nodes have sent their partial sums"
    else:
        what = f"{len(holders(trees, levels, step))}/{n_nodes} nodes hold data"
    return f"step {step}/{len(levels)}: {len(current)} transfers, {what}"
