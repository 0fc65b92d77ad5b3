"""Study plans: which rows a study has, which of them need a solve, and how a row is finished.

A :class:`StudyPlan` is built on the client. Its ``items`` are the work for the cluster (one
element per orbit, or one sweep point); :meth:`StudyPlan.expand` turns a worker's row for an
orbit's representative into the rows of every member, and :meth:`StudyPlan.finish` adds what
needs the whole study (the change against the reference, upgrade flags).

Upgrade shortcut (exact): the optimum is the minimum over cuts, so raising links that do not
cross the intact bottleneck set S* leaves S* at its value and the optimum unchanged. Those rows
are filled in without a solve (``on_bottleneck`` false, ``headroom`` NaN).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from solver.model.errors import TopologyError
from solver.model.schedule import COLLECTIVES
from solver.model.topology import Topology, to_fraction, validate
from solver.studies.columns import columns as study_columns
from solver.studies.columns import row_key
from solver.studies.elements import (
    DEFAULT_FAILURE_KINDS,
    Element,
    failure_elements,
    upgrade_elements,
)
from solver.studies.optimum import FabricOptimum, fabric_optimum
from solver.studies.symmetry import Orbits, box_classes, orbits
from solver.studies.tasks import (
    FAILURES,
    SWEEP,
    UPGRADE,
    SweepPoint,
    TaskContext,
    exact_text,
    optimum_fields,
)


@dataclass
class StudyPlan:
    """Everything a run needs: rows (keys), work items, the scattered context, the reference."""

    study: str
    collective: str
    parameters: dict[str, Any]
    topology: Topology | None  # the fabric the results file holds
    context: TaskContext
    keys: list[str]  # every row, in display order
    items: list[Any]  # one per solve: Element (representatives) or SweepPoint
    base: FabricOptimum | None = None
    orbits: Orbits | None = None
    elements: dict[str, Element] = field(default_factory=dict)
    free_rows: list[dict[str, Any]] = field(default_factory=list)  # rows known without a solve
    reference: Fraction | None = None  # algbw the change is measured against
    _members: dict[str, list[str]] | None = field(default=None, repr=False)

    @property
    def columns(self):
        return study_columns(self.study, self.parameters.get("param_names", ()))

    @property
    def symmetry(self) -> str:
        return self.orbits.method if self.orbits is not None else "none (not used by this study)"

    def members(self, key: str) -> list[str]:
        """Row keys computed by the work item ``key`` (its orbit; itself for sweeps)."""
        if self.orbits is None:
            return [key]
        if self._members is None:
            self._members = {}
            for k in self.keys:
                self._members.setdefault(self.orbits.representative[k], []).append(k)
        return self._members[key]

    def expand(self, raw: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Rows of every member of the orbit of ``raw`` (a representative's worker row)."""
        if self.orbits is None:
            return [dict(raw)]
        rep = row_key(raw)
        out = []
        for key in self.members(rep):
            row = dict(raw)
            row["element"] = key
            row["kind"] = self.elements[key].kind
            row["orbit"] = rep
            if key != rep:
                row["cut_links"] = [self._map_pair(key, pair) for pair in raw["cut_links"]]
            out.append(row)
        return out

    def _map_pair(self, member: str, pair: str) -> str:
        u, v = pair.split("->", 1)
        return f"{self.orbits.map_node(member, u)}->{self.orbits.map_node(member, v)}"

    def finish(self, row: dict[str, Any]) -> dict[str, Any]:
        """Add change, change_pct (and the upgrade flags) to a row; returns it."""
        algbw = Fraction(row["algbw_exact"])
        ref = self.reference
        if ref is None:
            row["change"], row["change_pct"] = math.nan, math.nan
        else:
            row["change"] = float(algbw - ref)
            row["change_pct"] = float(100 * (algbw - ref) / ref) if ref else math.nan
        if self.study == UPGRADE:
            element = self.elements[row["element"]]
            row["links"] = len(element.links)
            row["on_bottleneck"] = self.on_bottleneck(element)
            row["blocked"] = row["on_bottleneck"] and algbw == ref
            row["headroom"] = float(algbw) if row["on_bottleneck"] else math.nan
        return row

    def on_bottleneck(self, element: Element) -> bool:
        """Whether a link of ``element`` crosses the intact bottleneck set (in a binding way)."""
        ag, rs = (set(s) for s in self.base.starts)
        topo = self.context.topology
        for i in element.links:
            link = topo.links[i]
            u, v = link.source, link.target
            if self.collective in ("allgather", "allreduce") and _crosses(u, v, link.directed, ag):
                return True
            if self.collective in ("reduce-scatter", "allreduce") and _crosses(
                v, u, link.directed, rs
            ):
                return True
        return False


def _crosses(u: str, v: str, directed: bool, inside: set[str]) -> bool:
    if directed:
        return u in inside and v not in inside
    return (u in inside) != (v in inside)


def _check_collective(collective: str) -> None:
    if collective not in COLLECTIVES:
        raise TopologyError(
            f"unknown collective {collective!r} (choose from {', '.join(COLLECTIVES)})"
        )


def _base(topo: Topology, collective: str) -> FabricOptimum:
    _check_collective(collective)
    validate(topo)
    return fabric_optimum(topo, collective, symmetry=True)


def failure_plan(
    topo: Topology,
    kinds: Sequence[str] = DEFAULT_FAILURE_KINDS,
    collective: str = "allgather",
    use_symmetry: bool = True,
) -> StudyPlan:
    """N-1 study: every element of ``kinds`` removed in turn."""
    base = _base(topo, collective)
    elements = failure_elements(topo, kinds)
    orb = orbits(topo, elements, use_symmetry)
    reps = [e for e in elements if orb.representative[e.key] == e.key]
    params = {"elements": list(kinds), "collective": collective, "symmetry": use_symmetry}
    ctx = TaskContext(
        FAILURES,
        collective,
        topo,
        starts=base.starts,
        boxes=box_classes(topo) if use_symmetry else (),
    )
    return StudyPlan(
        FAILURES,
        collective,
        params,
        topo,
        ctx,
        [e.key for e in elements],
        reps,
        base,
        orb,
        {e.key: e for e in elements},
        reference=base.algbw,
    )


def upgrade_plan(
    topo: Topology,
    factor: Any = None,
    add: Any = None,
    by: str = "link",
    collective: str = "allgather",
    use_symmetry: bool = True,
) -> StudyPlan:
    """Upgrade advisor: each link (or class of links) at ``factor`` times or ``+add`` GB/s."""
    if (factor is None) == (add is None):
        raise TopologyError("give exactly one of --factor and --add")
    f = to_fraction(factor, "--factor") if factor is not None else None
    a = to_fraction(add, "--add") if add is not None else None
    if f is not None and f <= 1:
        raise TopologyError(f"--factor must be > 1, got {factor}")
    if a is not None and a <= 0:
        raise TopologyError(f"--add must be > 0 GB/s, got {add}")
    base = _base(topo, collective)
    elements = upgrade_elements(topo, by)
    orb = orbits(topo, elements, use_symmetry and by == "link")
    params = {
        "by": by,
        "collective": collective,
        "symmetry": use_symmetry,
        "factor": exact_text(f) if f is not None else "",
        "add": exact_text(a) if a is not None else "",
    }
    ctx = TaskContext(
        UPGRADE,
        collective,
        topo,
        factor=f,
        add=a,
        starts=base.starts,
        boxes=box_classes(topo) if use_symmetry else (),
    )
    plan = StudyPlan(
        UPGRADE,
        collective,
        params,
        topo,
        ctx,
        [e.key for e in elements],
        [],
        base,
        orb,
        {e.key: e for e in elements},
        reference=base.algbw,
    )
    for e in elements:
        if orb.representative[e.key] != e.key:
            continue
        if all(plan.on_bottleneck(plan.elements[k]) for k in plan.members(e.key)):
            plan.items.append(e)
        else:  # some member leaves the intact bottleneck at its value: nothing changes
            plan.free_rows.append({"element": e.key, "kind": e.kind, **optimum_fields(base)})
    return plan


def parse_param(text: str) -> tuple[str, list[Any]]:
    """``"n=2,4,8"`` -> ("n", [2, 4, 8]); numbers stay ints when written as integers."""
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not name or not values.strip():
        raise TopologyError(f"--param needs NAME=V1,V2,..., got {text!r}")
    out: list[Any] = []
    for part in values.split(","):
        part = part.strip()
        try:
            out.append(int(part))
        except ValueError:
            value = to_fraction(part, f"--param {name}")
            out.append(int(value) if value.denominator == 1 else float(value))
    return name, out


def sweep_plan(
    template: str | None = None,
    params: Sequence[tuple[str, Sequence[Any]]] = (),
    topologies: Mapping[str, Topology] | None = None,
    collective: str = "allgather",
) -> StudyPlan:
    """Sweep a template over the grid of ``params``, or solve every fabric of ``topologies``."""
    from solver.io.templates import TEMPLATES, make

    _check_collective(collective)
    if topologies is not None:
        if not topologies:
            raise TopologyError("--topologies: the folder holds no fabric file")
        points = [SweepPoint(name, {}, None, t) for name, t in topologies.items()]
        parameters = {"topologies": list(topologies), "collective": collective, "param_names": []}
        first = next(iter(topologies.values()))
    else:
        if template not in TEMPLATES:
            raise TopologyError(f"unknown template {template!r} (known: {', '.join(TEMPLATES)})")
        names = [n for n, _ in params]
        if len(set(names)) != len(names):
            raise TopologyError("--param: each parameter once")
        grid = list(itertools.product(*[list(v) for _, v in params])) if params else [()]
        points = []
        for combo in grid:
            values = dict(zip(names, combo))
            key = ",".join(f"{k}={v}" for k, v in values.items()) or template
            points.append(SweepPoint(key, values, template))
        first = make(template, **points[0].params)  # checks names and ranges of the first point
        for p in points[1:]:
            _check_ranges(template, p.params)
        parameters = {
            "template": template,
            "collective": collective,
            "param_names": names,
            **{f"param_{n}": list(v) for n, v in params},
        }
    keys = [p.key for p in points]
    if len(set(keys)) != len(keys):
        raise TopologyError("sweep points must be distinct")
    ctx = TaskContext(SWEEP, collective)
    return StudyPlan(SWEEP, collective, parameters, first, ctx, keys, points)


def _check_ranges(template: str, values: Mapping[str, Any]) -> None:
    from solver.io.templates import TEMPLATES

    for p in TEMPLATES[template].params:
        if p.name in values:
            v = Fraction(values[p.name])
            if v < Fraction(p.min) or (p.max is not None and v > Fraction(p.max)):
                raise TopologyError(
                    f"{p.label} must be between {p.min} and {p.max}, got {values[p.name]}"
                )
