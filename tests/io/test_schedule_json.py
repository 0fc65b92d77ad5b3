"""The streamed JSON writer writes exactly ``Schedule.to_dict()``, as strict JSON."""

from __future__ import annotations

import io
import json
from fractions import Fraction

import pytest

import solver
from solver.io.schedule_json import schedule_json_text, write_schedule_json
from solver.io.templates import dgx_a100
from solver.model.topology import COMPUTE, SWITCH, Link, Node, Topology


def _refuse(constant):
    raise ValueError(constant)


def _odd_names() -> Topology:
    """Names a JSON writer must escape: quotes, backslashes, slashes and non-ASCII characters."""
    names = ['g"0', "g\\1", "g/2", "gpü3"]
    nodes = [Node(n, COMPUTE, "gpu") for n in names] + [Node("sw</x>", SWITCH, "switch")]
    links = [Link(n, "sw</x>", Fraction(5)) for n in names] + [
        Link("sw</x>", n, Fraction(5)) for n in names
    ]
    return Topology(nodes=nodes, links=links, name="odd")


@pytest.mark.parametrize("collective", ["allgather", "reduce-scatter", "allreduce"])
@pytest.mark.parametrize("fabric", [_odd_names, lambda: dgx_a100(2)], ids=["odd-names", "2xA100"])
def test_streamed_document_is_to_dict(fabric, collective):
    schedule = solver.solve(fabric(), collective=collective)
    out = io.StringIO()
    write_schedule_json(schedule, out)
    text = out.getvalue()
    assert json.loads(text, parse_constant=_refuse) == schedule.to_dict()
    assert text == schedule_json_text(schedule) and text.endswith("}\n")
    # one line per tree: a reader can stream it too
    assert text.count("\n  {") == len(schedule.all_trees())
