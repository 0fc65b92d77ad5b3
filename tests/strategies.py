"""Hypothesis strategies for small random fabrics (<= 12 nodes, so cuts can be enumerated).

:func:`fabrics` draws always-valid fabrics: at least two compute nodes, compute nodes strongly
connected (a directed ring through them, each hop a full-duplex or one-way link, direct or through
a switch), every switch balanced (in-bandwidth == out-bandwidth), fractional bandwidths such as
12.5 and 3.2, parallel links, one-way compute links and switch-to-switch links.
:func:`unbalanced_fabrics` adds one one-way link at a switch so that exactly that switch is
unbalanced (and returns its id with the fabric).
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from solver.model.topology import Link, Node, Topology, validate

BANDWIDTHS = tuple(
    Fraction(v) for v in ("1", "2", "3.2", "12.5", "25", "50", "100", "300", "0.5", "1/3")
)
bandwidths = st.sampled_from(BANDWIDTHS)


@st.composite
def fabrics(
    draw,
    max_compute: int = 5,
    max_switches: int = 3,
    max_extra: int = 5,
    switches: bool = True,
    min_switches: int = 0,
) -> Topology:
    nc = draw(st.integers(2, max_compute))
    ns = draw(st.integers(min_switches, max_switches)) if switches else 0
    compute = [f"c{i}" for i in range(nc)]
    sws = [f"s{i}" for i in range(ns)]
    links: list[Link] = []

    def one_way_via(u, w, v, b):
        links.append(Link(u, w, b, directed=True))
        links.append(Link(w, v, b, directed=True))

    # Backbone: a directed ring over the compute nodes (in a drawn order).
    ring = draw(st.permutations(compute))
    for i, u in enumerate(ring):
        v = ring[(i + 1) % nc]
        b = draw(bandwidths)
        kinds = ["duplex", "oneway"] + (["switch-duplex", "switch-oneway"] if sws else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "duplex":
            links.append(Link(u, v, b))
        elif kind == "oneway":
            links.append(Link(u, v, b, directed=True))
        else:
            w = draw(st.sampled_from(sws))
            if kind == "switch-duplex":
                links.append(Link(u, w, b))
                links.append(Link(w, v, draw(bandwidths)))
            else:
                one_way_via(u, w, v, b)
    # Extra links: full duplex anywhere (keeps switches balanced), one-way between compute nodes,
    # one-way pairs through a switch (u -> w -> v with equal bandwidth), parallel links allowed.
    everyone = compute + sws
    for _ in range(draw(st.integers(0, max_extra))):
        b = draw(bandwidths)
        kind = draw(st.sampled_from(["duplex", "oneway"] + (["switch-oneway"] if sws else [])))
        if kind == "duplex":
            u, v = draw(st.permutations(everyone))[:2]
            links.append(Link(u, v, b))
        elif kind == "oneway":
            u, v = draw(st.permutations(compute))[:2]
            links.append(Link(u, v, b, directed=True))
        else:
            w = draw(st.sampled_from(sws))
            u, v = draw(st.permutations(compute))[:2]
            one_way_via(u, w, v, b)
    nodes = [Node(c, "compute", role="gpu") for c in compute] + [
        Node(s, "switch", role="nvswitch") for s in sws
    ]
    nodes = draw(st.permutations(nodes))
    return validate(Topology("hypothesis", tuple(nodes), tuple(links)))


@st.composite
def unbalanced_fabrics(draw, max_compute: int = 4, max_switches: int = 2) -> tuple[Topology, str]:
    """A valid fabric plus one one-way link at a switch: (fabric, id of the unbalanced switch)."""
    base = draw(fabrics(max_compute=max_compute, max_switches=max_switches, min_switches=1))
    w = draw(st.sampled_from(sorted(base.switch_ids)))
    c = draw(st.sampled_from(sorted(base.compute_ids)))
    b = draw(bandwidths)
    link = Link(c, w, b, directed=True) if draw(st.booleans()) else Link(w, c, b, directed=True)
    topo = Topology(base.name, base.nodes, base.links + (link,))
    return validate(topo), w


def switch_balance(topo: Topology) -> dict[str, Fraction]:
    """in-bandwidth minus out-bandwidth of every switch."""
    bal = {w: Fraction(0) for w in topo.switch_ids}
    for (u, v), b in topo.directed_bandwidths().items():
        if v in bal:
            bal[v] += b
        if u in bal:
            bal[u] -= b
    return bal


def small_ring(n: int = 4, bandwidth: Fraction = Fraction(25, 2)) -> Topology:
    """A fixed full-duplex ring of n compute nodes (for non-random tests)."""
    nodes = tuple(Node(f"c{i}", "compute", role="gpu") for i in range(n))
    links = tuple(Link(f"c{i}", f"c{(i + 1) % n}", bandwidth) for i in range(n))
    return validate(Topology(f"ring{n}", nodes, links))
