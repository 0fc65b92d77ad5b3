"""The whole collective in time: every transfer of every tree, chunk by chunk (pure, no Qt).

A ForestColl schedule gives each root k trees; tree t carries ``weight`` = multiplicity/k of
the root's shard. The timeline splits every tree's share into ``chunks`` equal chunks and
pipelines them: chunk c crosses a tree edge into depth d at round c + d (allgather trees send
from the root down; reduce-scatter trees from the leaves up, round c + (height - d + 1); an
allreduce runs its reduce-scatter rounds, then its allgather rounds). Each event says which
shard (whose data, which tree and chunk), how many bytes (``size`` is the collective's message
size M, so a root's shard is M/N) and which hop.

These are *logical rounds*: every transfer takes one round, whatever its link's bandwidth and
whoever else uses the link -- the order of the collective, not its time (the simulator times
it; see the Plots panel).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from solver.model.schedule import Schedule
from solver.model.units import format_size

#: More transfers than this are not listed (the table and the drawing would not be readable).
MAX_EVENTS = 20000


@dataclass(frozen=True)
class Event:
    """One transfer: chunk ``chunk`` of tree ``tree`` (of root ``root``) over one tree edge."""

    round: int  # 1-based
    phase: str  # allgather / reduce-scatter
    tree: int  # index into Timeline.trees
    root: str
    chunk: int  # 0-based
    src: str
    dst: str
    path: tuple[str, ...]
    bytes: Fraction

    def shard_text(self, chunks: int, multiplicity: int, k: int) -> str:
        share = "all of it" if multiplicity == k else f"{multiplicity}/{k} of it"
        return f"{self.root}'s shard ({share} in this tree), chunk {self.chunk + 1} of {chunks}"

    def hop_text(self) -> str:
        return " → ".join(self.path)


@dataclass(frozen=True)
class Timeline:
    collective: str
    chunks: int
    size: int  # message size M in bytes
    trees: tuple  # (phase, Tree) pairs, as Schedule.all_trees()
    k: int
    events: tuple[Event, ...]  # by round, then tree, then chunk
    rounds: int

    def at(self, round_: int) -> list[int]:
        """Indices of the events of round ``round_``."""
        return [i for i, e in enumerate(self.events) if e.round == round_]

    def holders(self, round_: int, root: str = "") -> set[str]:
        """Nodes that have received (a chunk of) some shard -- ``root``'s only, when given --
        by the end of ``round_`` (the shards' own GPUs included in an allgather)."""
        got = {e.dst for e in self.events if e.round <= round_ and (not root or e.root == root)}
        if self.collective != "reduce-scatter" and round_ > 0:
            owners = {t.root for p, t in self.trees if p == "allgather"}
            got |= {root} & owners if root else owners
        return got

    def describe(self, index: int) -> str:
        """What event ``index`` moves, in words."""
        e = self.events[index]
        tree = self.trees[e.tree][1]
        what = "partial sums of" if e.phase == "reduce-scatter" else ""
        return (
            f"round {e.round} ({e.phase}): {what + ' ' if what else ''}"
            f"{e.shard_text(self.chunks, tree.multiplicity, self.k)}; "
            f"{format_size(round(e.bytes))} ({float(e.bytes):.6g} B); "
            f"hop {e.hop_text()}"
        )


def collective_timeline(schedule: Schedule, chunks: int = 4, size: int = 1 << 20) -> Timeline:
    """The pipelined timeline of ``schedule`` (see module docstring); raises ValueError past
    :data:`MAX_EVENTS` transfers or for ``chunks`` outside 1..64."""
    if not 1 <= chunks <= 64:
        raise ValueError(f"chunks must be 1..64, not {chunks}")
    trees = schedule.all_trees()
    edges = sum(len(t.edges) for _, t in trees)
    if edges * chunks > MAX_EVENTS:
        raise ValueError(
            f"{edges * chunks} transfers ({edges} tree edges × {chunks} chunks): "
            f"more than the timeline lists ({MAX_EVENTS}); use fewer chunks"
        )
    n = schedule.num_compute_nodes or 1
    shard = Fraction(size, n)
    phases = [p for p in dict.fromkeys(p for p, _ in trees)]
    offset: dict[str, int] = {}
    start = 0
    raw: list[tuple[int, int, int, Event]] = []
    for phase in phases:  # reduce-scatter before allgather (allreduce)
        offset[phase] = start
        longest = 0
        for ti, (p, tree) in enumerate(trees):
            if p != phase:
                continue
            depth = tree.depth_of()
            height = max(depth.values()) if depth else 0
            per_chunk = shard * tree.weight / chunks
            for e in tree.edges:
                child = e.dst if depth.get(e.dst, 0) > depth.get(e.src, 0) else e.src
                d = depth[child]
                level = (height - d + 1) if phase == "reduce-scatter" else d
                for c in range(chunks):
                    r = start + c + level
                    longest = max(longest, r - start)
                    raw.append(
                        (
                            r,
                            ti,
                            c,
                            Event(
                                r, phase, ti, tree.root, c, e.src, e.dst, tuple(e.path), per_chunk
                            ),
                        )
                    )
        start += longest
    raw.sort(key=lambda x: x[:3])
    events = tuple(ev for *_, ev in raw)
    return Timeline(
        schedule.collective,
        chunks,
        size,
        trees,
        schedule.k,
        events,
        max((e.round for e in events), default=0),
    )
