"""Step 1: the exact optimum (Dinkelbach) against brute force and the published figures."""

import itertools
import random
from fractions import Fraction

import pytest

from solver.algorithm.optimum import compute_optimum, packing_integers
from solver.flow.csr import IndexedFabric
from solver.io import templates
from solver.model.topology import Link, Node, Topology


def random_fabric(seed: int, n_compute: int = 4, n_switch: int = 2, directed: bool = False):
    """A small strongly connected fabric: a ring of compute nodes plus random links."""
    rng = random.Random(seed)
    nodes = [Node(f"c{i}", "compute") for i in range(n_compute)]
    nodes += [Node(f"s{i}", "switch") for i in range(n_switch)]
    bws = [Fraction(1), Fraction(2), Fraction(5, 2), Fraction(3), Fraction(25, 3)]
    links = [Link(f"c{i}", f"c{(i + 1) % n_compute}", rng.choice(bws)) for i in range(n_compute)]
    names = [n.id for n in nodes]
    for _ in range(rng.randint(1, 3 * len(nodes))):
        u, v = rng.sample(names, 2)
        links.append(Link(u, v, rng.choice(bws), directed=directed and rng.random() < 0.5))
    for sw in names[n_compute:]:
        links.append(Link(rng.choice(names[:n_compute]), sw, rng.choice(bws)))
    return Topology(f"random{seed}", tuple(nodes), tuple(links))


def brute_force_rate(topo: Topology) -> Fraction:
    names = topo.node_ids
    comp = set(topo.compute_ids)
    bws = topo.directed_bandwidths()
    best = None
    for r in range(1, len(names)):
        for S in itertools.combinations(names, r):
            S = set(S)
            inside = len(S & comp)
            if inside == 0 or inside == len(comp):
                continue
            out = sum((b for (u, v), b in bws.items() if u in S and v not in S), Fraction(0))
            rate = out / inside
            if best is None or rate < best:
                best = rate
    return best


@pytest.mark.parametrize("seed", range(30))
def test_optimum_matches_brute_force(seed):
    topo = random_fabric(seed, n_compute=3 + seed % 3, n_switch=seed % 3, directed=seed % 2 == 1)
    fabric = IndexedFabric.from_topology(topo)
    opt = compute_optimum(fabric)
    assert opt.rate == brute_force_rate(topo)
    assert opt.algbw == opt.rate * len(topo.compute_ids)
    # the reported cut attains the optimum
    mask = opt.cut
    inside = sum(1 for v in fabric.compute if mask[v])
    assert 0 < inside < fabric.num_compute
    assert fabric.out_bandwidth(mask) / inside == opt.rate
    assert opt.cut_bandwidth == fabric.out_bandwidth(mask)
    # packing integers: k/U = rate, U*b integral, k minimal
    assert Fraction(opt.k) / opt.U == opt.rate
    assert all((opt.U * b).denominator == 1 for b in fabric.bandwidth)
    assert list(opt.caps) == [int(opt.U * b) for b in fabric.bandwidth]
    for smaller in range(1, opt.k):
        U = Fraction(smaller) / opt.rate
        assert any((U * b).denominator != 1 for b in fabric.bandwidth)


def test_packing_integers_examples():
    fabric = IndexedFabric.from_topology(templates.dgx_a100(1))
    assert packing_integers(fabric, Fraction(7, 300)) == (1, Fraction(7, 300))


@pytest.mark.parametrize(
    "make, algbw, k",
    [
        (lambda: templates.dgx_a100(1), Fraction(2400, 7), 1),
        (lambda: templates.dgx_a100(2), Fraction(1040, 3), 13),
        (lambda: templates.mi250(1), Fraction(2400, 7), 3),
        (lambda: templates.mi250(2), Fraction(5312, 15), 83),
        (lambda: templates.dgx_a100(4), Fraction(800, 3), 1),
        (lambda: templates.mi250(4), Fraction(1024, 3), 8),
    ],
)
def test_published_figures(make, algbw, k):
    opt = compute_optimum(IndexedFabric.from_topology(make()))
    assert opt.algbw == algbw
    assert opt.k == k
    assert opt.iterations <= 5
