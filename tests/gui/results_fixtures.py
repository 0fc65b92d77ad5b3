"""Hand-made schedules for the results tests (independent of solver.solve)."""

from __future__ import annotations

import threading
import time
from fractions import Fraction

from solver.model.errors import Cancelled, SolverError
from solver.model.schedule import BottleneckCut, LinkLoad, Schedule, Tree, TreeEdge
from solver.model.topology import COMPUTE, Link, Node, Topology


def ring4() -> Topology:
    """Four GPUs on a full-duplex ring of 100 GB/s links, laid out on a square."""
    xy = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
    nodes = tuple(Node(f"gpu{i}", COMPUTE, role="gpu", x=x, y=y) for i, (x, y) in enumerate(xy))
    links = tuple(Link(f"gpu{i}", f"gpu{(i + 1) % 4}", Fraction(100)) for i in range(4))
    return Topology("ring4", nodes, links)


def _chain(root: int, step: int) -> Tree:
    ids = [(root + step * j) % 4 for j in range(4)]
    edges = tuple(
        TreeEdge(f"gpu{a}", f"gpu{b}", (f"gpu{a}", f"gpu{b}")) for a, b in zip(ids, ids[1:])
    )
    return Tree(f"gpu{root}", 1, Fraction(1, 2), edges)


def ring4_schedule() -> Schedule:
    """The optimal allgather on :func:`ring4`: per root a clockwise and an anticlockwise chain.

    x* = 200/3 per node (S* = all GPUs but gpu3), algbw* = 800/3; every directed link is loaded
    3/8 M / (100 · 3M/800) = 1 (all saturated).
    """
    topo = ring4()
    trees = tuple(t for r in range(4) for t in (_chain(r, 1), _chain(r, -1)))
    loads = []
    for (u, v), bw in topo.directed_bandwidths().items():
        loads.append(LinkLoad(u, v, bw, Fraction(1)))
    cut = BottleneckCut(
        nodes=("gpu0", "gpu1", "gpu2"),
        compute_nodes_inside=3,
        egress_bandwidth=Fraction(200),
        links=(("gpu2", "gpu3", Fraction(100)), ("gpu0", "gpu3", Fraction(100))),
    )
    algbw = Fraction(800, 3)
    return Schedule(
        topology=topo,
        collective="allgather",
        k=2,
        max_trees_per_root=None,
        optimal_algbw_exact=algbw,
        algbw_exact=algbw,
        bottleneck=cut,
        trees=trees,
        link_load=tuple(loads),
        timings={"optimum": 0.01, "switch_removal": 0.0, "trees": 0.02, "paths": 0.0},
    )


class FakeSolver:
    """A solve function for worker tests: reports progress, honours cancel, can fail.

    ``duration`` seconds of work in small slices; ``fail`` makes it raise that exception.
    """

    def __init__(self, duration: float = 0.2, fail: Exception | None = None) -> None:
        self.duration = duration
        self.fail = fail
        self.calls: list[dict] = []
        self.thread_names: list[str] = []

    def __call__(
        self, topology, collective="allgather", max_trees_per_root=None, progress=None, cancel=None
    ):
        self.calls.append(
            {
                "topology": topology,
                "collective": collective,
                "max_trees_per_root": max_trees_per_root,
            }
        )
        self.thread_names.append(threading.current_thread().name)
        t0 = time.monotonic()
        steps = 20
        for i in range(steps):
            if cancel is not None and cancel.is_set():
                raise Cancelled("cancelled")
            if progress is not None:
                progress("optimum" if i < steps // 2 else "trees", (i + 1) / steps)
            time.sleep(self.duration / steps)
        if self.fail is not None:
            raise self.fail
        assert time.monotonic() - t0 >= 0
        return ring4_schedule()


def failing_solver(message: str = "switch 'sw0' is unbalanced: in 50 GB/s, out 25 GB/s"):
    return FakeSolver(0.05, SolverError(message))
