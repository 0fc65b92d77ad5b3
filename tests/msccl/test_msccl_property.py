"""Property: on random small fabrics, every exported MSCCL XML passes the checker.

For each random fabric (compute nodes on a ring backbone, optional switches, random extra links and
bandwidths) we solve allgather, reduce-scatter and allreduce (with and without a tree limit) and
export for every runtime; the export checks by executing, and we re-check the XML text.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

import solver
from solver.model.topology import Link, Node, Topology
from solver.msccl import ExportOptions, check_xml, export_xml
from solver.msccl.runtimes import RUNTIMES

BANDWIDTHS = (Fraction(1), Fraction(2), Fraction(5, 2), Fraction(4))


@st.composite
def fabrics(draw):
    n = draw(st.integers(3, 6))
    n_switches = draw(st.integers(0, 2))
    compute = [f"g{i}" for i in range(n)]
    switches = [f"sw{i}" for i in range(n_switches)]
    nodes = [Node(c, "compute") for c in compute] + [Node(s, "switch") for s in switches]
    links = [
        Link(compute[i], compute[(i + 1) % n], draw(st.sampled_from(BANDWIDTHS))) for i in range(n)
    ]
    for s in switches:
        members = draw(st.lists(st.sampled_from(compute), min_size=2, max_size=n, unique=True))
        links += [Link(c, s, draw(st.sampled_from(BANDWIDTHS))) for c in members]
    extra = draw(
        st.lists(st.tuples(st.sampled_from(compute), st.sampled_from(compute)), max_size=3)
    )
    links += [Link(a, b, draw(st.sampled_from(BANDWIDTHS))) for a, b in extra if a != b]
    return Topology("random", tuple(nodes), tuple(links))


@given(
    fabrics(),
    st.sampled_from([1, 2, None]),
    st.sampled_from(["allgather", "reduce-scatter", "allreduce"]),
)
def test_random_fabric_exports_pass_checker(topo, k, collective):
    schedule = solver.solve(topo, collective, max_trees_per_root=k)
    for runtime in RUNTIMES.values():
        text = export_xml(schedule, ExportOptions(runtime))
        report = check_xml(text, runtime)
        assert report.ngpus == len(topo.compute_ids)
        assert report.collective == collective


@given(fabrics(), st.integers(1, 3), st.sampled_from(["Simple", "LL", "LL128"]))
def test_random_fabric_instances_and_rank_orders(topo, instances, proto):
    schedule = solver.solve(topo, "allreduce", max_trees_per_root=1)
    order = list(reversed(topo.compute_ids))
    text = export_xml(
        schedule,
        ExportOptions(RUNTIMES["msccl-executor"], proto=proto, instances=instances, order=order),
    )
    report = check_xml(text, RUNTIMES["msccl-executor"])
    assert report.nchannels >= instances
