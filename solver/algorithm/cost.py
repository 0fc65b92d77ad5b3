"""Up-front cost estimates of the solver's phases that grow faster than the fabric file.

Each check runs before the phase starts and raises :class:`CostLimit` (a
:class:`~solver.model.errors.SolverError`: one ``error:`` line and exit 2 in the CLI, a dialog in
the designer) naming the estimate and the limit, instead of letting a small legal file ask for
gigabytes or hours. The limits are generous multiples of the largest fabrics the solver is
measured on (README, Performance: 4096 GPUs, 1.7e7 tree edges, about 1 GB):

- :data:`MAX_TREE_EDGES`: tree edges of the full schedule, N·(N-1) per allgather (x2 for
  allreduce). Larger fabrics need a compressed plan (identical boxes) or are refused.
- :data:`MAX_PLAN_TREE_EDGES`: tree edges of a compressed plan, which keeps k >= 1 trees of
  N - 1 edges per root of one box: :func:`max_plan_box` compute nodes per box at most, so that
  the search for boxes does not even try larger ones (a 32 768-GPU Clos's zones: 4096 roots).
- :data:`MAX_DISTINCT_ROUTES`: distinct routed tree edges (one object each, about 500 bytes with
  their loads and checks) of a forest that shares none between trees, as a star's N·(N-1).
- :data:`MAX_FLOW_ROWS_BYTES`: the stored flow matrices of switch splitting and tree packing, one
  residual array per compute node: N x arcs x 8 bytes.
- :data:`MAX_FLOW_WORK`: max-flow work of the exact optimum, estimated as (sinks per step) x
  (arcs) x (BFS depth of the fabric), which is what Dinic's phases cost on long thin fabrics
  (chains, rings: measured 3.5 ns per unit here); a few Dinkelbach steps are allowed for.
- :data:`MAX_PACKING_WORK`: tree packing grows N·k trees edge by edge with a flow repair per
  tested edge; estimated as N² x (BFS depth of the switch-free graph) x min(k, 8) (classes of
  identical trees keep large k cheap). A ring of 256 GPUs: 1.7e7 (3.6 s), of 500: 1.25e8 (19 s,
  packing ~16 s); a ring of 700 (1.7e8 already at k = 1) is refused.
- :data:`MAX_FIXED_K_WORK`: the fixed-k search tries every k in (K/2, K]; each k costs at least
  one max-flow per compute node.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from solver.flow.csr import IndexedFabric
from solver.model.errors import SolverError

MAX_TREE_EDGES = 20_000_000
MAX_PLAN_TREE_EDGES = 20_000_000
MAX_DISTINCT_ROUTES = 4_000_000
MAX_FLOW_ROWS_BYTES = 2 * 1024**3
MAX_FLOW_WORK = 2_000_000_000
MAX_FIXED_K_WORK = 20_000_000
MAX_PACKING_WORK = 150_000_000


class CostLimit(SolverError):
    """A phase's up-front estimate exceeds its limit; the message names both."""


def _gib(n: float) -> str:
    return f"{n / 1024**3:.3g} GiB"


def check_schedule_size(num_compute: int, phases: int = 1) -> None:
    """Refuse a full schedule of more than :data:`MAX_TREE_EDGES` tree edges."""
    edges = num_compute * (num_compute - 1) * phases
    if edges > MAX_TREE_EDGES:
        raise CostLimit(
            f"the full schedule of {num_compute} compute nodes has {edges:.3g} tree edges "
            f"(limit {MAX_TREE_EDGES:.3g}); fabrics of identical boxes can be solved as a "
            "compressed plan (--compressed), others must be smaller"
        )


def max_plan_box(num_compute: int) -> int:
    """The most compute nodes per box of a compressed plan (:data:`MAX_PLAN_TREE_EDGES`)."""
    return max(1, MAX_PLAN_TREE_EDGES // max(1, num_compute - 1))


def check_routes(what: str, routes: int) -> None:
    """Refuse a forest of more than :data:`MAX_DISTINCT_ROUTES` distinct routed tree edges."""
    if routes > MAX_DISTINCT_ROUTES:
        raise CostLimit(
            f"{what} has {routes:.3g} distinct routed tree edges (limit "
            f"{MAX_DISTINCT_ROUTES:.3g}, about 2 GB)"
        )


def check_flow_rows(phase: str, rows: int, arcs: int) -> None:
    """Refuse a stored flow matrix of ``rows`` x ``arcs`` int64 over :data:`MAX_FLOW_ROWS_BYTES`."""
    size = 8 * rows * arcs
    if size > MAX_FLOW_ROWS_BYTES:
        raise CostLimit(
            f"{phase} would store {rows} flows of {arcs} arcs ({_gib(size)}; limit "
            f"{_gib(MAX_FLOW_ROWS_BYTES)} of flow rows)"
        )


def depth(fabric: IndexedFabric) -> int:
    """Hops from the first compute node to the farthest node, links taken both ways (>= 1)."""
    return _depth(fabric.n, fabric.edges, fabric.compute[0])


def _depth(n: int, edges, start: int) -> int:
    adj: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        adj[u].append(v)
        adj[v].append(u)
    dist = [-1] * n
    dist[start] = 0
    todo = deque([start])
    while todo:
        x = todo.popleft()
        for y in adj[x]:
            if dist[y] < 0:
                dist[y] = dist[x] + 1
                todo.append(y)
    return max(1, max(dist))


def flow_work(fabric: IndexedFabric, sinks: int) -> int:
    """Estimated work of one max-flow to each of ``sinks`` compute nodes."""
    arcs = 2 * (len(fabric.edges) + fabric.num_compute)
    return sinks * arcs * depth(fabric)


def check_optimum(fabric: IndexedFabric, sinks: Sequence[int] | None) -> None:
    """Refuse an exact optimum whose max-flows exceed :data:`MAX_FLOW_WORK` per step."""
    count = fabric.num_compute if sinks is None else len(sinks)
    work = flow_work(fabric, count)
    if work > MAX_FLOW_WORK:
        raise CostLimit(
            f"the exact optimum needs {count} max-flows per step on {fabric.n} nodes of depth "
            f"{depth(fabric)} (estimated work {work:.3g}; limit {MAX_FLOW_WORK:.3g})"
        )


def check_packing(N: int, pairs, k: int) -> None:
    """Refuse a tree packing on ranks 0..N-1 (edges ``pairs``) over :data:`MAX_PACKING_WORK`."""
    hops = _depth(N, pairs, 0)
    work = N * N * hops * min(k, 8)
    if work > MAX_PACKING_WORK:
        raise CostLimit(
            f"tree packing of {N} roots on a switch-free graph of depth {hops} (estimated work "
            f"{work:.3g}; limit {MAX_PACKING_WORK:.3g})"
        )


def check_fixed_k(fabric: IndexedFabric, K: int) -> None:
    """Refuse a fixed-k search over (K/2, K] whose max-flows exceed :data:`MAX_FIXED_K_WORK`."""
    candidates = K - K // 2
    work = candidates * flow_work(fabric, fabric.num_compute)
    if work > MAX_FIXED_K_WORK:
        most = max(1, MAX_FIXED_K_WORK // max(1, flow_work(fabric, fabric.num_compute)))
        raise CostLimit(
            f"--max-trees-per-root {K} means trying {candidates} tree counts k in (K/2, K], "
            f"each with {fabric.num_compute} max-flows (estimated work {work:.3g}; limit "
            f"{MAX_FIXED_K_WORK:.3g}, about {2 * most} for K on this fabric)"
        )
