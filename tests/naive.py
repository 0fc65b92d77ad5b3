"""Slow, obviously-correct twin of the ForestColl pipeline, in plain Python + networkx.

Used only by tests, on small fabrics (<= 12 nodes for the exhaustive optimum). Every step follows
the textbook statement directly; nothing here is tuned for speed.

- :func:`exhaustive_optimum` — enumerate every cut S (S∩Vc ≠ ∅, Vc ⊄ S) and take
  x* = min B+(S)/|S∩Vc| exactly; also returns all optimal cuts.
- :func:`rate_is_feasible` — max-flow feasibility of a per-node rate x (Edmonds, cut form).
- :func:`maxflow_optimum` — the same optimum through max-flow (Dinkelbach on the ratio).
- :func:`fixed_k_units` — the smallest U such that capacities ⌊U·b(e)⌋ pass the cut condition
  for k trees per root (a lower-bound ascent that stops at the exact U*).
- :func:`twin_solve` — a complete :class:`Schedule`: switch removal by edge splitting (largest
  feasible amount found by binary search, each test a full rooted-connectivity check), tree
  packing by growing trees one edge at a time while a max-flow certificate (Edmonds' theorem with
  root sets) says the rest can still be completed, and path mapping through the recorded splits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise

import networkx as nx

from solver.model.errors import SolverError
from solver.model.schedule import BottleneckCut, LinkLoad, Schedule, Tree, TreeEdge
from solver.model.topology import Topology

SOURCE = ("__twin_source__",)


# ----------------------------------------------------------------------------- optimum
@dataclass(frozen=True)
class Optimum:
    x: Fraction  # optimal per-node rate, GB/s
    algbw: Fraction  # N · x
    cuts: tuple[frozenset, ...]  # every S reaching the minimum (exhaustive) or the one found


def _cut_ratio(caps, compute, inside) -> Fraction:
    count = sum(1 for c in compute if c in inside)
    out = sum((b for (u, v), b in caps.items() if u in inside and v not in inside), Fraction(0))
    return out / count


def exhaustive_optimum(topo: Topology) -> Optimum:
    """x* by enumerating all vertex subsets (fabrics of at most 12 nodes)."""
    nodes = topo.node_ids
    if len(nodes) > 12:
        raise ValueError(f"exhaustive enumeration is limited to 12 nodes, got {len(nodes)}")
    compute = set(topo.compute_ids)
    n = len(compute)
    caps = topo.directed_bandwidths()
    index = {v: i for i, v in enumerate(nodes)}
    edges = [(1 << index[u], 1 << index[v], b) for (u, v), b in caps.items()]
    cmask = sum(1 << index[c] for c in compute)
    best = None
    cuts: list[frozenset] = []
    for mask in range(1, 1 << len(nodes)):
        count = (mask & cmask).bit_count()
        if count == 0 or count == n:
            continue
        out = sum((b for bu, bv, b in edges if mask & bu and not mask & bv), Fraction(0))
        ratio = out / count
        if best is None or ratio < best:
            best, cuts = ratio, []
        if ratio == best:
            cuts.append(frozenset(v for v in nodes if mask & (1 << index[v])))
    return Optimum(best, n * best, tuple(cuts))


def _scale(values) -> int:
    return math.lcm(*(Fraction(v).denominator for v in values))


def _min_source_side(caps_int: dict, source_caps: dict, t) -> tuple[int, set]:
    g = nx.DiGraph()
    for (u, v), c in caps_int.items():
        if c > 0:
            g.add_edge(u, v, capacity=c)
    for v, c in source_caps.items():
        if c > 0:
            g.add_edge(SOURCE, v, capacity=c)
    g.add_node(t)
    value, (side, _) = nx.minimum_cut(g, SOURCE, t)
    return value, set(side) - {SOURCE}


def rate_is_feasible(topo: Topology, x: Fraction) -> bool:
    """Edmonds' cut form: source s -> every compute node with capacity x; x is feasible iff
    maxflow(s -> t) >= N·x for every compute node t (exact, capacities scaled to integers)."""
    x = Fraction(x)
    compute = topo.compute_ids
    caps = topo.directed_bandwidths()
    scale = _scale(list(caps.values()) + [x])
    caps_int = {e: int(b * scale) for e, b in caps.items()}
    src = {v: int(x * scale) for v in compute}
    return all(_min_source_side(caps_int, src, t)[0] >= len(compute) * x * scale for t in compute)


def maxflow_optimum(topo: Topology) -> tuple[Fraction, frozenset]:
    """(x*, S*) by Dinkelbach: improve a cut until max-flow proves no cut has a smaller ratio."""
    compute = topo.compute_ids
    n = len(compute)
    caps = topo.directed_bandwidths()
    scale = _scale(caps.values())
    inside = set(topo.node_ids) - {compute[0]}
    lam = _cut_ratio(caps, compute, inside)
    while True:
        p, q = lam.numerator, lam.denominator
        # s->v capacity λ and edge capacities b(e), all multiplied by scale·q (integers).
        caps_int = {e: int(b * scale * q) for e, b in caps.items()}
        src = {v: scale * p for v in compute}
        better = None
        for t in compute:
            value, side = _min_source_side(caps_int, src, t)
            if value < n * scale * p:
                ratio = _cut_ratio(caps, compute, side)
                assert ratio < lam
                if better is None or ratio < better[0]:
                    better = (ratio, side)
        if better is None:
            return lam, frozenset(inside)
        lam, inside = better


def rooted_ok(caps_int: dict, compute, k: int, classes=None) -> bool:
    """Edmonds' condition by max-flow: can the (partial) trees still be completed?

    ``classes`` is a list of (vertex set, multiplicity) of partial trees; by default one
    single-vertex class of multiplicity k per compute node. True iff for every compute t the
    max-flow from a super source (an edge of capacity m to a class node, infinite edges from the
    class node to its vertices) to t carries the total multiplicity of all classes, i.e. every
    vertex set X has in-capacity >= the multiplicity of the classes that miss X.
    """
    if classes is None:
        classes = [({c}, k) for c in compute]
    g = nx.DiGraph()
    for (u, v), c in caps_int.items():
        if c > 0:
            g.add_edge(u, v, capacity=c)
    for i, (verts, m) in enumerate(classes):
        node = ("__class__", i)
        g.add_edge(SOURCE, node, capacity=m)
        for v in verts:
            g.add_edge(node, v)  # no capacity attribute: infinite
    total = sum(m for _verts, m in classes)
    for t in compute:
        if all(t in verts for verts, _m in classes):
            continue
        if t not in g or SOURCE not in g:
            return False
        # Classes holding t send their m straight to t, so this is: flow from the classes
        # not holding t >= their total multiplicity.
        if nx.maximum_flow_value(g, SOURCE, t) < total:
            return False
    return True


def tree_units(topo: Topology, x: Fraction) -> tuple[int, Fraction]:
    """(k, U): smallest k with integer capacities c(e) = U·b(e), U = k / x."""
    caps = topo.directed_bandwidths()
    k = math.lcm(*((b / x).denominator for b in caps.values()))
    return k, k / x


def fixed_k_units(topo: Topology, k: int) -> Fraction:
    """Smallest U such that ⌊U·b(e)⌋ passes the cut condition for k trees per root.

    Ascent: U starts at the continuous bound k/x*; while some cut S fails, raise U to the smallest
    value at which S alone passes (a lower bound of U*). Stops exactly at U*.
    """
    compute = topo.compute_ids
    n = len(compute)
    caps = topo.directed_bandwidths()
    x, _ = maxflow_optimum(topo)
    u = k / x
    while True:
        caps_int = {e: math.floor(u * b) for e, b in caps.items()}
        src = {v: k for v in compute}
        violated = None
        for t in compute:
            value, side = _min_source_side(caps_int, src, t)
            if value < n * k:
                violated = side
                break
        if violated is None:
            return u
        need = k * sum(1 for c in compute if c in violated)
        leaving = [b for (a, c), b in caps.items() if a in violated and c not in violated]
        while sum(math.floor(u * b) for b in leaving) < need:
            u = min(Fraction(math.floor(u * b) + 1) / b for b in leaving)


def fixed_k_algbw(topo: Topology, k: int) -> Fraction:
    """Cut bound of schedules with exactly k trees per root: N·k / U*(k)."""
    return len(topo.compute_ids) * k / fixed_k_units(topo, k)


def best_algbw_at_most(topo: Topology, max_k: int) -> Fraction:
    """Cut bound of schedules with at most ``max_k`` trees per root (optimum if k* <= max_k)."""
    x, _ = maxflow_optimum(topo)
    k_opt, _ = tree_units(topo, x)
    if k_opt <= max_k:
        return len(topo.compute_ids) * x
    return max(fixed_k_algbw(topo, k) for k in range(1, max_k + 1))


# ----------------------------------------------------------------------------- routes
def _take(routes: list, amount: int) -> list:
    """Remove ``amount`` units from the end of a [(path, units)] list; return them."""
    out = []
    while amount:
        path, have = routes[-1]
        used = min(have, amount)
        out.append((path, used))
        amount -= used
        if used == have:
            routes.pop()
        else:
            routes[-1] = (path, have - used)
    return out


def _add(routes: list, path: tuple, amount: int) -> None:
    for i, (p, have) in enumerate(routes):
        if p == path:
            routes[i] = (p, have + amount)
            return
    routes.append((path, amount))


def _pair(first: list, second: list) -> list:
    """Join two equal-sized unit lists into paths first+second (sharing the middle node)."""
    first, second = list(first), list(second)
    out = []
    while first:
        (p1, a1), (p2, a2) = first[0], second[0]
        used = min(a1, a2)
        out.append((p1 + p2[1:], used))
        first[0], second[0] = (p1, a1 - used), (p2, a2 - used)
        if a1 == used:
            first.pop(0)
        if a2 == used:
            second.pop(0)
    return out


def _largest(hi: int, ok) -> int:
    """Largest g in [0, hi] with ok(g), for ok monotone decreasing and ok(0) true."""
    if hi <= 0:
        return 0
    if ok(hi):
        return hi
    lo, hi = 0, hi - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


# ----------------------------------------------------------------------------- steps 2-4
def remove_switches(topo: Topology, caps: dict, k: int) -> tuple[dict, dict, list]:
    """Split every switch away; return (compute-only capacities, routes, warnings).

    ``routes[(u, t)]`` lists (physical path, units) adding up to the capacity of logical edge
    (u, t). An integer imbalance at a switch is first trimmed (largest safe amounts); a switch
    that cannot be balanced or split completely raises :class:`SolverError` naming it.
    """
    compute = topo.compute_ids
    caps = {e: c for e, c in caps.items() if c > 0}
    routes = {e: [((e[0], e[1]), c)] for e, c in caps.items()}
    warnings = []
    for w in topo.switch_ids:
        ins = sum(c for (a, b), c in caps.items() if b == w)
        outs = sum(c for (a, b), c in caps.items() if a == w)
        if ins != outs:
            side = [e for e in caps if (e[1] == w if ins > outs else e[0] == w)]
            excess = abs(ins - outs)
            for e in side:

                def ok(g, e=e, caps=caps):
                    trial = dict(caps)
                    trial[e] -= g
                    return rooted_ok(trial, compute, k)

                g = _largest(min(excess, caps[e]), ok)
                caps[e] -= g
                _take(routes[e], g)
                excess -= g
            if excess:
                raise SolverError(
                    f"switch {w!r} is unbalanced (in {ins} != out {outs} units) "
                    "and cannot be trimmed"
                )
            warnings.append(f"switch {w!r}: trimmed {abs(ins - outs)} unusable units")
        while True:
            ins = [e for e, c in caps.items() if e[1] == w and c > 0]
            outs = [e for e, c in caps.items() if e[0] == w and c > 0]
            if not ins:
                break
            progress = False
            for ein in ins:
                for eout in outs:
                    u, t = ein[0], eout[1]

                    def ok(g, ein=ein, eout=eout, u=u, t=t, caps=caps):
                        trial = dict(caps)
                        trial[ein] -= g
                        trial[eout] -= g
                        if u != t:
                            trial[(u, t)] = trial.get((u, t), 0) + g
                        return rooted_ok(trial, compute, k)

                    g = _largest(min(caps[ein], caps[eout]), ok)
                    if g:
                        caps[ein] -= g
                        caps[eout] -= g
                        joined = _pair(_take(routes[ein], g), _take(routes[eout], g))
                        if u != t:
                            caps[(u, t)] = caps.get((u, t), 0) + g
                            lst = routes.setdefault((u, t), [])
                            for path, units in joined:
                                _add(lst, path, units)
                        progress = True
                        break
                if progress:
                    break
            if not progress:
                raise SolverError(f"switch {w!r}: no splittable pair left")
            caps = {e: c for e, c in caps.items() if c > 0}
    return caps, routes, warnings


def pack_trees(compute, caps: dict, k: int) -> list:
    """Grow k trees per root on a switch-free graph; return [root, mult, [(x, y)...]] classes."""
    caps = dict(caps)
    classes = [[r, k, {r}, []] for r in compute]
    full = set(compute)

    def feasible(extra_caps, cls_list):
        partial = [(verts, m) for _r, m, verts, _e in cls_list if verts != full and m > 0]
        return rooted_ok(extra_caps, compute, k, partial)

    while True:
        todo = [i for i, c in enumerate(classes) if c[2] != full]
        if not todo:
            break
        i = todo[0]
        root, m, verts, edges = classes[i]
        grown = False
        for x, y in sorted(e for e, c in caps.items() if c > 0):
            if x not in verts or y in verts:
                continue

            def ok(mu, x=x, y=y, i=i, root=root, m=m, verts=verts):
                trial_caps = dict(caps)
                trial_caps[(x, y)] -= mu
                trial = [c for j, c in enumerate(classes) if j != i]
                trial += [[root, mu, verts | {y}, None], [root, m - mu, verts, None]]
                return feasible(trial_caps, trial)

            mu = _largest(min(m, caps[(x, y)]), ok)
            if mu:
                caps[(x, y)] -= mu
                classes[i] = [root, mu, verts | {y}, edges + [(x, y)]]
                if mu < m:
                    classes.insert(i + 1, [root, m - mu, set(verts), list(edges)])
                grown = True
                break
        if not grown:
            raise SolverError(f"twin: cannot grow a tree of root {root!r}")
    return [(r, m, e) for r, m, _v, e in classes]


def map_paths(classes: list, routes: dict) -> list:
    """Route each logical edge of each tree class on physical paths; split classes as needed."""
    routes = {e: list(r) for e, r in routes.items()}
    trees = []
    for root, m, edges in classes:
        # Each edge's units, as consecutive segments over [0, m).
        segs = [_take(routes[e], m) for e in edges]
        cuts = {0, m}
        for s in segs:
            pos = 0
            for _p, units in s:
                pos += units
                cuts.add(pos)
        points = sorted(cuts)
        for lo, hi in pairwise(points):
            paths = []
            for s in segs:
                pos = 0
                for p, units in s:
                    if pos <= lo < pos + units:
                        paths.append(p)
                        break
                    pos += units
            trees.append((root, hi - lo, list(zip(edges, paths))))
    return trees


def _bfs_order(root, edge_paths):
    depth = {root: 0}
    for (x, y), _p in edge_paths:
        depth[y] = depth[x] + 1
    return sorted(edge_paths, key=lambda ep: depth[ep[0][1]])


def _loads(topo, trees, k):
    n = len(topo.compute_ids)
    caps = topo.directed_bandwidths()
    data: dict = {}
    for t in trees:
        for e in t.edges:
            for a, b in pairwise(e.path):
                data[(a, b)] = data.get((a, b), Fraction(0)) + t.weight / n
    time = max(d / caps[e] for e, d in data.items())
    return data, time


def twin_solve(
    topo: Topology, collective: str = "allgather", max_trees_per_root: int | None = None
) -> Schedule:
    """A complete, verified-by-construction-intent schedule computed the slow way."""
    if collective == "allreduce":
        rs = twin_solve(topo, "reduce-scatter", max_trees_per_root)
        ag = twin_solve(topo, "allgather", max_trees_per_root)
        d_rs, t_rs = _loads(topo, rs.trees, rs.k)
        d_ag, t_ag = _loads(topo, ag.trees, ag.k)
        time = t_rs + t_ag
        caps = topo.directed_bandwidths()
        loads = tuple(
            LinkLoad(
                u,
                v,
                caps[(u, v)],
                (d_rs.get((u, v), 0) + d_ag.get((u, v), 0)) / (caps[(u, v)] * time),
            )
            for (u, v) in caps
            if (u, v) in d_rs or (u, v) in d_ag
        )
        return Schedule(
            topology=topo,
            collective="allreduce",
            k=ag.k,
            max_trees_per_root=max_trees_per_root,
            optimal_algbw_exact=1 / (1 / rs.optimal_algbw_exact + 1 / ag.optimal_algbw_exact),
            algbw_exact=1 / time,
            bottleneck=ag.bottleneck,
            trees=(),
            link_load=loads,
            warnings=rs.warnings + ag.warnings,
            phases=(rs, ag),
        )
    reverse = collective == "reduce-scatter"
    work = topo.reversed() if reverse else topo
    compute = work.compute_ids
    n = len(compute)
    bw = work.directed_bandwidths()
    x, cut = maxflow_optimum(work)
    k, u = tree_units(work, x)
    if max_trees_per_root is not None and k > max_trees_per_root:
        best = None
        for kk in range(1, max_trees_per_root + 1):
            uu = fixed_k_units(work, kk)
            if best is None or Fraction(kk) / uu > Fraction(best[0]) / best[1]:
                best = (kk, uu)
        k, u = best
    caps = {e: math.floor(u * b) for e, b in bw.items()}
    logical, routes, warnings = remove_switches(work, caps, k)
    classes = pack_trees(compute, logical, k)
    raw = map_paths(classes, routes)
    merged: dict = {}
    for root, m, edge_paths in raw:
        key = (root, tuple(_bfs_order(root, edge_paths)))
        merged[key] = merged.get(key, 0) + m
    trees = []
    for (root, edge_paths), m in merged.items():
        if reverse:
            tedges = tuple(TreeEdge(y, x_, tuple(reversed(p))) for (x_, y), p in edge_paths)
        else:
            tedges = tuple(TreeEdge(x_, y, tuple(p)) for (x_, y), p in edge_paths)
        trees.append(Tree(root, m, Fraction(m, k), tedges))
    data, time = _loads(topo, trees, k)
    caps_orig = topo.directed_bandwidths()
    loads = tuple(
        LinkLoad(a, b, caps_orig[(a, b)], data[(a, b)] / (caps_orig[(a, b)] * time))
        for (a, b) in caps_orig
        if (a, b) in data
    )
    # The cut is found on ``work``; on the original fabric, reduce-scatter's links enter S.
    links = tuple((a, b, bw[(a, b)]) for (a, b) in bw if a in cut and b not in cut)
    if reverse:
        links = tuple((b, a, w) for a, b, w in links)
    bottleneck = BottleneckCut(
        nodes=tuple(v for v in topo.node_ids if v in cut),
        compute_nodes_inside=sum(1 for c in compute if c in cut),
        egress_bandwidth=sum((w for _a, _b, w in links), Fraction(0)),
        links=links,
    )
    return Schedule(
        topology=topo,
        collective=collective,
        k=k,
        max_trees_per_root=max_trees_per_root,
        optimal_algbw_exact=n * x,
        algbw_exact=1 / time,
        bottleneck=bottleneck,
        trees=tuple(trees),
        link_load=loads,
        warnings=tuple(warnings),
    )


# ----------------------------------------------------------------------------- fixed k, exact
def _vectors(m: int, total: int):
    """Every vector of m non-negative integers with sum <= total."""
    if m == 0:
        yield ()
        return
    for first in range(total + 1):
        for rest in _vectors(m - 1, total - first):
            yield (first,) + rest


def trimmed_fixed_k_units(topo: Topology, k: int, max_steps: int = 50) -> Fraction:
    """Smallest U whose floors ⌊U·b(e)⌋ admit k trees per root *through switches*, by brute force.

    For each U (from the cut bound, through the breakpoints of the floors) every trim vector t on
    the switch links with Σt <= Σ|in - out| · (number of switches) is tried: the capacities minus
    t must balance every switch and pass the cut condition (``rooted_ok``). That bound holds
    every maximal balanced trim (one simple path of at most #switches links per unit of
    imbalance).
    """
    compute = set(topo.compute_ids)
    switches = [n.id for n in topo.nodes if n.id not in compute]
    bws = topo.directed_bandwidths()
    u = fixed_k_units(topo, k)
    for _ in range(max_steps):
        caps = {e: math.floor(u * b) for e, b in bws.items()}
        imbalance = {w: 0 for w in switches}
        for (a, b), c in caps.items():
            if b in imbalance:
                imbalance[b] += c
            if a in imbalance:
                imbalance[a] -= c
        trimmable = [e for e in caps if e[0] not in compute or e[1] not in compute]
        budget = sum(abs(x) for x in imbalance.values()) * len(switches)
        for t in _vectors(len(trimmable), budget):
            if any(x > caps[e] for x, e in zip(t, trimmable)):
                continue
            left = dict(imbalance)
            for x, (a, b) in zip(t, trimmable):
                if b in left:
                    left[b] -= x
                if a in left:
                    left[a] += x
            if any(left.values()):
                continue
            trimmed = dict(caps)
            for x, e in zip(t, trimmable):
                trimmed[e] -= x
            if rooted_ok(trimmed, topo.compute_ids, k):
                return u
        u = min(Fraction(math.floor(u * b) + 1) / b for b in bws.values())
    raise AssertionError("no feasible trim found")


# ----------------------------------------------------------------------------- capability bounds
def exhaustive_allreduce_any(topo: Topology) -> Fraction:
    """Any-schedule allreduce bound min over S separating compute nodes of min(B+(S), B-(S)),
    by enumerating every vertex subset (fabrics of at most 14 nodes)."""
    nodes = topo.node_ids
    if len(nodes) > 14:
        raise ValueError(f"exhaustive enumeration is limited to 14 nodes, got {len(nodes)}")
    compute = set(topo.compute_ids)
    caps = topo.directed_bandwidths()
    best = None
    for mask in range(1, 1 << len(nodes)):
        inside = {v for i, v in enumerate(nodes) if mask >> i & 1}
        if not (inside & compute) or compute <= inside:
            continue
        out = sum((b for (u, v), b in caps.items() if u in inside and v not in inside), Fraction(0))
        inn = sum((b for (u, v), b in caps.items() if v in inside and u not in inside), Fraction(0))
        value = min(out, inn)
        best = value if best is None else min(best, value)
    return best


def hierarchical_time_twin(topo: Topology) -> Fraction:
    """Seconds per byte of the hierarchical NVLS allreduce, counted transfer by transfer.

    Domains: every switch that reduces and multicasts, with the compute nodes linked to it
    (assumed disjoint, covering, equal size p). Intra-domain: each GPU v sends w its p-1 foreign
    portions (1/p each), w returns v's partial (1/p), v sends its result (1/p), w sends it to each
    other member (one transfer per link: multicast). Inter-domain: the j-th GPUs of all domains,
    on the non-domain switches (dead-end switches dropped), allreduce 1/p with the exhaustive
    allgather optimum of that fabric and of its reverse; groups sharing a link run in sequence."""
    caps = topo.directed_bandwidths()
    domains = []
    for n in topo.nodes:
        if n.reduces and n.multicasts:
            domains.append(
                (n.id, [c for c in topo.compute_ids if (c, n.id) in caps and (n.id, c) in caps])
            )
    p = len(domains[0][1])
    load: dict[tuple[str, str], Fraction] = {}

    def send(u, v, amount):
        load[(u, v)] = load.get((u, v), Fraction(0)) + amount

    for w, members in domains:
        for v in members:
            for _ in range(p - 1):
                send(v, w, Fraction(1, p))  # foreign portions up
            send(w, v, Fraction(1, p))  # partial of v's portion down
            send(v, w, Fraction(1, p))  # v's result up once
            for u in members:
                if u != v:
                    send(w, u, Fraction(1, p))  # multicast copies
    intra = max(amount / caps[e] for e, amount in load.items())
    if len(domains) == 1:
        return intra
    domain_switches = {w for w, _ in domains}
    times, link_sets = [], []
    for j in range(p):
        group = {members[j] for _, members in domains}
        g = nx.Graph()
        for u, v in caps:
            ok = [
                x in group or (x not in domain_switches and not topo.node(x).is_compute)
                for x in (u, v)
            ]
            if all(ok):
                g.add_edge(u, v)
        changed = True
        while changed:
            changed = False
            for x in list(g.nodes):
                if x not in group and g.degree(x) <= 1:
                    g.remove_node(x)
                    changed = True
        keep = set(g.nodes)
        sub = topo.without([n.id for n in topo.nodes if n.id not in keep])
        ag = exhaustive_optimum(sub).algbw
        rs = exhaustive_optimum(sub.reversed()).algbw
        times.append((1 / ag + 1 / rs) / p)
        link_sets.append(set(sub.directed_bandwidths()))
    shared = any(link_sets[a] & link_sets[b] for a in range(p) for b in range(a + 1, p))
    inter = sum(times, Fraction(0)) if shared else max(times)
    return max(intra, inter)
