"""Step 3: pack k out-trees per root into the switch-free compute graph.

Trees grow one class at a time, breadth-first from the root. A class is ``m`` identical partial
trees (vertex set V_i). Edge (x, y), x in V_i, y not, may take

    μ = min(m, c(x, y), maxflow(σ -> y) - Σ_{j != i} m_j)

copies, where the flow network has the residual compute graph, a source σ with an uncuttable edge
to x, an edge σ -> r of the untouched multiplicity of every root r, and one auxiliary node per
other partial class j (edge σ -> a_j of m_j, uncuttable edges a_j -> V_j). Complete classes are
left out. μ < m splits the class; the rest continues later as its own class. This keeps Edmonds'
condition ``ρ_res(Z) >= Σ_j m_j [Z ∩ V_j = ∅]`` for every set Z of compute nodes, so every class
can always be completed (Lovász's proof of Edmonds' branching theorem).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ._jit import njit
from .errors import SolverError
from .maxflow import INF, FlowNetwork, _dinic


@dataclass
class TreeClass:
    """``mult`` identical trees from ``root`` with logical edges (parent, child) in BFS order."""

    root: int
    mult: int
    edges: list[tuple[int, int]] = field(default_factory=list)
    members: list[int] = field(default_factory=list)  # BFS order
    scan: int = 0  # position in members of the next vertex to expand
    slot: int = -1  # auxiliary node slot while partial and not being grown


@njit
def _edge_gain(indptr, head, rev, cap, res, src, y, need, level, it, queue, stack):
    for a in range(res.shape[0]):
        res[a] = cap[a]
    return _dinic(indptr, head, rev, res, src, y, need, level, it, queue, stack)


class _PackingNetwork:
    """Flow network: N compute ranks, σ = N, then auxiliary nodes; capacities edited in place."""

    def __init__(self, N: int, caps: dict[tuple[int, int], int], slots: int):
        self.N = N
        self.slots = slots
        sigma = N
        pairs = list(caps)
        tails = [u for u, _ in pairs] + [sigma] * N
        heads = [v for _, v in pairs] + list(range(N))
        for j in range(slots):
            a = N + 1 + j
            tails += [sigma] + [a] * N
            heads += [a] + list(range(N))
        ecaps = [caps[p] for p in pairs] + [0] * (N + slots * (N + 1))
        self.net = FlowNetwork(N + 1 + slots, tails, heads, ecaps)
        arc = self.net.edge_arc
        self.pair_arc = {p: int(arc[i]) for i, p in enumerate(pairs)}
        base = len(pairs)
        self.root_arc = arc[base: base + N]
        self.slot_arc = []
        self.member_arc = []
        pos = base + N
        for _ in range(slots):
            self.slot_arc.append(int(arc[pos]))
            self.member_arc.append(arc[pos + 1: pos + 1 + N])
            pos += N + 1


def pack_trees(
    N: int,
    caps: dict[tuple[int, int], int],
    k: int,
    check: Callable[[], None] | None = None,
    progress: Callable[[float], None] | None = None,
) -> tuple[list[TreeClass], int]:
    """Pack ``k`` spanning out-trees per root (ranks 0..N-1); return (classes, flows run).

    ``caps`` maps (x, y) rank pairs to integer capacities with ``λ(s, v) >= N·k`` (s -> every rank
    with capacity k). Raises :class:`SolverError` if a tree cannot be completed (a bug).
    """
    res_caps = {e: c for e, c in caps.items() if c > 0}
    out_nb: list[list[int]] = [[] for _ in range(N)]
    for (x, y) in res_caps:
        out_nb[x].append(y)
    for lst in out_nb:
        lst.sort()
    slots = 4
    pn = _PackingNetwork(N, res_caps, slots)
    untouched = [k] * N
    for r in range(N):
        pn.net.cap[pn.root_arc[r]] = k
    free_slots = list(range(slots - 1, -1, -1))
    pending: list[TreeClass] = []  # partial classes waiting (each holds an aux slot)
    done: list[TreeClass] = []
    total_open = N * k  # multiplicity of classes not yet complete
    flows = 0
    sigma = N
    net = pn.net

    def grab_slot(cls: TreeClass) -> None:
        nonlocal pn, net, free_slots
        if not free_slots:
            # grow the network: rebuild with twice the slots and re-install everything
            old_slots = pn.slots
            cur = {p: int(net.cap[a]) for p, a in pn.pair_arc.items()}
            pn = _PackingNetwork(N, cur, old_slots * 2)
            net = pn.net
            for r in range(N):
                net.cap[pn.root_arc[r]] = untouched[r]
            for c in pending:
                _install(c)
            free_slots = list(range(pn.slots - 1, old_slots - 1, -1))
        cls.slot = free_slots.pop()

    def _install(cls: TreeClass) -> None:
        net.cap[pn.slot_arc[cls.slot]] = cls.mult
        net.cap[pn.member_arc[cls.slot][cls.members]] = INF

    def release(cls: TreeClass) -> None:
        net.cap[pn.slot_arc[cls.slot]] = 0
        net.cap[pn.member_arc[cls.slot]] = 0
        free_slots.append(cls.slot)
        cls.slot = -1

    for root in range(N):
        cls = TreeClass(root, k, [], [root], 0)
        untouched[root] = 0
        net.cap[pn.root_arc[root]] = 0
        while cls is not None:
            members = set(cls.members)
            while len(cls.members) < N:
                progress_made = False
                while cls.scan < len(cls.members) and len(cls.members) < N:
                    x = cls.members[cls.scan]
                    for y in out_nb[x]:
                        if y in members:
                            continue
                        cxy = int(net.cap[pn.pair_arc[(x, y)]])
                        if cxy == 0:
                            continue
                        if check is not None:
                            check()
                        others = total_open - cls.mult
                        want = min(cls.mult, cxy)
                        old = net.cap[pn.root_arc[x]]
                        net.cap[pn.root_arc[x]] = INF
                        f = int(_edge_gain(net.indptr, net.head, net.rev, net.cap, net.res, sigma, y,
                                       others + want, net._level, net._it, net._queue, net._stack))
                        net.cap[pn.root_arc[x]] = old
                        flows += 1
                        mu = min(want, f - others)
                        if mu <= 0:
                            continue
                        if mu < cls.mult:
                            rest = TreeClass(cls.root, cls.mult - mu, list(cls.edges),
                                             list(cls.members), cls.scan)
                            grab_slot(rest)
                            _install(rest)
                            pending.append(rest)
                            cls.mult = mu
                        net.cap[pn.pair_arc[(x, y)]] -= mu
                        cls.edges.append((x, y))
                        cls.members.append(y)
                        members.add(y)
                        progress_made = True
                    cls.scan += 1
                if len(cls.members) < N and not progress_made and cls.scan >= len(cls.members):
                    if getattr(cls, "_rescanned", False):
                        raise SolverError(
                            f"internal error: tree from rank {cls.root} cannot be completed"
                        )
                    cls._rescanned = True  # type: ignore[attr-defined]
                    cls.scan = 0
            total_open -= cls.mult
            done.append(cls)
            if progress is not None:
                progress(1 - total_open / (N * k))
            cls = pending.pop() if pending else None
            if cls is not None:
                release(cls)
    return done, flows
