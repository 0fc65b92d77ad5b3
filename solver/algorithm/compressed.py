"""``solve_compressed()``: the allgather schedule of a box-symmetric fabric as a compressed plan.

The full schedule of N roots holds about N² tree edges (16 384 GPUs: 2.7·10⁸), which neither fits
in memory as objects nor in a file of sensible size. On a fabric with a box translation σ of
order B (:mod:`solver.algorithm.symmetry`) this module splits the switches by σ-equivariant plans
and grows trees for the roots of box 0, keeping one logical edge per orbit
(:mod:`solver.algorithm.orbit_plan`), routes them (:mod:`solver.algorithm.orbit_routes`) and
returns those representative trees with σ (:class:`~solver.model.plan.CompressedSchedule`).

Link loads come from *orbit sums*: σ also permutes the directed links, and the expanded forest
puts on link e the representatives' use of every link in e's orbit O(e), each counted B/|O(e)|
times (σ^b maps a link of O onto e for exactly B/|O| values of b). So the loads, the schedule
time and the algbw are exact without building a translated tree.

Steps and costs (F = fabric links, R = N/B representative roots, D = logical out-degree): box
symmetry O(F), the optimum with one max-flow per representative sink, plans one small max-flow
per switch orbit, packing O(R·k·N·D) in vectorised steps, routing and loads O(F + R·k·N·path
length). Nothing of size N² is built.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from solver.algorithm import cost
from solver.algorithm.optimum import Optimum, compute_optimum
from solver.algorithm.orbit_plan import pack_orbits, split_orbits
from solver.algorithm.orbit_routes import representative_trees
from solver.algorithm.spare_trim import trim_shared_links
from solver.algorithm.symmetry import BoxSymmetry, box_symmetry
from solver.flow.csr import IndexedFabric
from solver.model.errors import SolverError
from solver.model.plan import CompressedSchedule
from solver.model.schedule import BottleneckCut, LinkLoad, Schedule, Tree
from solver.model.topology import Topology, validate


def solve_compressed(
    topology: Topology,
    check: Callable[[], None] | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> CompressedSchedule:
    """The exact allgather optimum of ``topology`` as representative trees plus σ.

    Raises :class:`SolverError` (one line) when the fabric has no box translation, or when
    the symmetric plans or orbit packing do not reach the optimum (the full solver then has to
    be used, without ``--compressed``).
    """
    validate(topology)
    fabric = IndexedFabric.from_topology(topology)
    N = fabric.num_compute
    # the plan keeps k >= 1 trees of N - 1 edges per root of one box: larger boxes are not tried
    most = cost.max_plan_box(N)
    # the odometer of nested tiers first (racks in zones: boxes of one rack); when its plans
    # or packing do not work out, the box translation that fixes every switch, if another
    sym = box_symmetry(topology, fabric, nested=True, max_box_compute=most)
    if sym is not None and sym.nested:
        try:
            return _solve_symmetric(topology, fabric, sym, check, progress)
        except SolverError as nested_error:
            if str(nested_error).startswith("internal error"):
                raise
            sym = box_symmetry(topology, fabric, max_box_compute=most)
            if sym is None:
                raise
    if sym is None:
        raise SolverError(
            "no box symmetry found with at most "
            f"{most} compute {'node' if most == 1 else 'nodes'} per box (a compressed plan "
            "needs identical boxes, named by node groups or joined by shared switches, whose "
            f"translation fixes every other node; it keeps the trees of one box's roots, at "
            f"most {cost.MAX_PLAN_TREE_EDGES:.3g} tree edges); {_instead(N)}"
        )
    return _solve_symmetric(topology, fabric, sym, check, progress)


def _solve_symmetric(
    topology: Topology,
    fabric: IndexedFabric,
    sym: BoxSymmetry,
    check: Callable[[], None] | None,
    progress: Callable[[str, float], None] | None,
) -> CompressedSchedule:
    """The compressed plan for the verified σ ``sym``; :class:`SolverError` when a step fails."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    N = fabric.num_compute
    if progress is not None:
        progress("optimum", 0.0)
    opt = compute_optimum(fabric, check, sinks=sym.sinks(fabric))
    timings["optimum"] = time.perf_counter() - t0
    if progress is not None:
        progress("switch_removal", 0.0)
    t0 = time.perf_counter()
    # plans and box-0 trees on edge orbits: the full logical graph has ~N²/8 edges on rails
    # spare capacity at shared switches (fat-tree spines) would make the plans dense
    caps = trim_shared_links(fabric, list(opt.caps), opt.k, sym, check)
    # a nested switch's plan spreads a fixed neighbour's units evenly over the neighbours it
    # moves: k trees per root times m keeps the optimum and makes those shares whole
    m = divisibility_factor(fabric, sym, caps)
    k = opt.k * m
    if m > 1:
        caps = [c * m for c in caps]
    split = split_orbits(fabric, dict(zip(fabric.edges, caps)), k, sym, check)
    timings["switch_removal"] = time.perf_counter() - t0
    if split is None:
        raise SolverError(
            f"a switch cannot be split by a symmetric plan on this fabric; {_instead(N)}"
        )
    rep_caps, paths = split
    if progress is not None:
        progress("trees", 0.0)
    t0 = time.perf_counter()
    reps = pack_orbits(fabric, sym, rep_caps, k, check)
    timings["trees"] = time.perf_counter() - t0
    if reps is None:
        raise SolverError(f"orbit packing found no trees for box 0 at the optimum; {_instead(N)}")
    if progress is not None:
        progress("paths", 0.0)
    t0 = time.perf_counter()
    trees = representative_trees(fabric, sym, reps, paths, k)
    order = {c: i for i, c in enumerate(topology.compute_ids)}
    trees.sort(key=lambda t: order[t.root])
    loads, algbw = orbit_loads(topology, fabric, sym.shift, sym.boxes, trees, k)
    timings["paths"] = time.perf_counter() - t0
    if progress is not None:
        progress("paths", 1.0)
    if algbw != opt.algbw:
        raise SolverError(
            f"internal error: compressed plan reaches {float(algbw):g} GB/s, "
            f"optimum {float(opt.algbw):g}"
        )
    base = Schedule(
        topology=topology,
        collective="allgather",
        k=k,
        max_trees_per_root=None,
        optimal_algbw_exact=opt.algbw,
        algbw_exact=algbw,
        bottleneck=_bottleneck(fabric, opt),
        trees=tuple(trees),
        link_load=tuple(loads),
        timings=timings,
    )
    return CompressedSchedule(base, sym.shift, sym.boxes)


def divisibility_factor(fabric: IndexedFabric, sym: BoxSymmetry, caps: list[int]) -> int:
    """The smallest m such that every link (u, w) or (w, u) at a switch w outside the boxes has
    m times its capacity divisible by |H_u|, u's stabiliser in w's (H_w = ⟨σ^p(w)⟩): what
    :meth:`~solver.algorithm.orbit_plan._OrbitSplitter.nested_switch_plan` needs of a link
    whose far end the plan must treat alike (a spine seen from an SU's leaf); 1 when it is
    more than :data:`MAX_K_FACTOR` (the plans then say which switch they cannot split)."""
    B, per = sym.boxes, sym.period
    m = 1
    for (u, v), c in zip(fabric.edges, caps):
        for w, x in ((v, u), (u, v)):
            if fabric.is_compute[w] or sym.box_of[w] >= 0 or not c:
                continue
            h = B // math.lcm(int(per[w]), int(per[x]))
            m = math.lcm(m, h // math.gcd(c, h))
            if m > MAX_K_FACTOR:
                return 1
    return m


#: at most this many times the optimum's k trees per root for whole shares (plans stay small)
MAX_K_FACTOR = 64


def _instead(num_compute: int) -> str:
    """What to run instead of a compressed plan that cannot be made."""
    try:
        cost.check_schedule_size(num_compute)
    except cost.CostLimit:
        return "--optimum-only gives the exact optimum and bottleneck cut"
    return "solve without --compressed"


def link_orbits(fabric: IndexedFabric, generator: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(orbit id per directed link, orbit sizes) under the node permutation ``generator``.

    Raises :class:`SolverError` if the generator moves a link onto a non-link.
    """
    index = {e: i for i, e in enumerate(fabric.edges)}
    image = np.empty(len(fabric.edges), dtype=np.int64)
    for i, (u, v) in enumerate(fabric.edges):
        j = index.get((int(generator[u]), int(generator[v])))
        if j is None:
            raise SolverError(
                f"the generator moves link {fabric.names[u]}->{fabric.names[v]} "
                "onto a pair that is no link"
            )
        image[i] = j
    orbit = np.full(len(fabric.edges), -1, dtype=np.int64)
    sizes = []
    for start in range(len(fabric.edges)):
        if orbit[start] >= 0:
            continue
        e, size = start, 0
        while orbit[e] < 0:
            orbit[e] = len(sizes)
            size += 1
            e = int(image[e])
        sizes.append(size)
    return orbit, np.asarray(sizes, dtype=np.int64)


def orbit_loads(
    topology: Topology,
    fabric: IndexedFabric,
    generator: np.ndarray,
    order: int,
    trees: list[Tree],
    k: int,
) -> tuple[list[LinkLoad], Fraction]:
    """Per-link loads and algbw of the expanded forest, from the representatives' orbit sums."""
    orbit, sizes = link_orbits(fabric, generator)
    index = {name: i for i, name in enumerate(fabric.names)}
    link = {e: i for i, e in enumerate(fabric.edges)}
    per_orbit = np.zeros(len(sizes), dtype=object)
    per_orbit[:] = 0
    uses: dict[tuple[str, ...], int] = {}
    for t in trees:
        for e in t.edges:
            uses[e.path] = uses.get(e.path, 0) + t.multiplicity
    for path, m in uses.items():
        for a, b in zip(path, path[1:]):
            per_orbit[orbit[link[(index[a], index[b])]]] += m
    if any(order % int(s) for s in sizes):
        raise SolverError("a link orbit's size does not divide the order of the generator")
    N = fabric.num_compute
    # the full forest's trees crossing link e: (B/|O|) · the orbit's sum
    usage = [Fraction(int(per_orbit[o]) * (order // int(sizes[o])), N * k) for o in orbit]
    time_ = max(d / b for d, b in zip(usage, fabric.bandwidth))
    names = fabric.names
    loads = [
        LinkLoad(names[u], names[v], b, d / (b * time_))
        for (u, v), b, d in zip(fabric.edges, fabric.bandwidth, usage)
    ]
    by_link = {(x.source, x.target): x for x in loads}
    ordered = [by_link[e] for e in topology.directed_bandwidths() if e in by_link]
    return ordered, 1 / time_


def _bottleneck(fabric: IndexedFabric, opt: Optimum) -> BottleneckCut:
    names, mask = fabric.names, opt.cut
    links = tuple(
        (names[u], names[v], b)
        for (u, v), b in zip(fabric.edges, fabric.bandwidth)
        if mask[u] and not mask[v]
    )
    return BottleneckCut(
        tuple(names[i] for i in range(fabric.n) if mask[i]),
        opt.cut_compute,
        opt.cut_bandwidth,
        links,
    )


__all__ = ["divisibility_factor", "link_orbits", "orbit_loads", "solve_compressed"]
