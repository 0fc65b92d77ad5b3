"""scale_up_warnings: boxes whose GPUs meet only through PCIe/CPU are named; designs are not."""

from __future__ import annotations

from fractions import Fraction

from solver.io.templates import TEMPLATES, make
from solver.model.scale_up import scale_up_warnings
from solver.model.topology import COMPUTE, SWITCH, Link, Node, Topology


def box(gpus: int, group: str | None = "b0", nvlinks=(), switch_role="pcie") -> Topology:
    nodes = [Node(f"g{i}", COMPUTE, "gpu", group=group) for i in range(gpus)]
    nodes.append(Node("sw", SWITCH, switch_role, group=group))
    links = [Link(f"g{i}", "sw", Fraction(24)) for i in range(gpus)]
    links += [Link(f"g{a}", f"g{b}", Fraction(48)) for a, b in nvlinks]
    return Topology("t", tuple(nodes), tuple(links))


def test_pcie_only_box_is_named():
    assert scale_up_warnings(box(4)) == [
        "no NVLink/xGMI links found in box b0 — its 4 GPUs reach each other only through "
        "PCIe/CPU; is this dump complete?"
    ]
    assert scale_up_warnings(box(4, group=None))[0].startswith(
        "no NVLink/xGMI links found in the fabric"
    )


def test_two_hives_are_named_with_their_members():
    topo = box(4, nvlinks=[(0, 1), (2, 3)])
    assert scale_up_warnings(topo) == [
        "box b0: 2 groups of GPUs reach each other only through PCIe/CPU (g0, g1 | g2, g3)"
    ]


def test_full_scale_up_or_network_only_is_quiet():
    assert scale_up_warnings(box(3, nvlinks=[(0, 1), (1, 2)])) == []
    assert scale_up_warnings(box(1)) == []
    assert scale_up_warnings(box(4, switch_role="nvswitch")) == []
    assert scale_up_warnings(box(4, switch_role="leaf")) == []  # a design, not a lost dump
    pcie_class = Topology(
        "t",
        (Node("a", COMPUTE, "gpu", group="b0"), Node("b", COMPUTE, "gpu", group="b0")),
        (Link("a", "b", Fraction(12), extra={"link_class": "pcie"}),),
    )
    assert len(scale_up_warnings(pcie_class)) == 1


def test_templates_have_no_warning():
    for name in TEMPLATES:
        assert scale_up_warnings(make(name)) == [], name
