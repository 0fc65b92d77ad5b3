"""``forestcoll info TOPO``: what a fabric file holds, and whether the solver can use it."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from solver.algorithm.capability_bounds import CapabilityBounds, capability_bounds, describe
from solver.cli._common import add_command, add_fabric_options, load_fabric
from solver.io import strict_json
from solver.model.errors import SolverError, TopologyError
from solver.model.scale_up import scale_up_warnings
from solver.model.topology import CAPABILITIES, Topology, validate
from solver.model.values import printable
from solver.simulate.library import pick_library

#: compute nodes above which ``info`` (and the bounds lines of ``solve``) skip the capability
#: bounds unless asked (``--bounds``): they are several exact optima and 2(N-1) max-flows, minutes
#: at 2048 GPUs, while the rest of ``info`` is linear in the file
BOUNDS_MAX_COMPUTE = 1024


def bounds_skipped_note(compute: int, how: str = "forestcoll info --bounds FILE") -> str:
    """The one line said instead of the capability bounds of a large fabric."""
    return (
        f"{compute} compute nodes, over {BOUNDS_MAX_COMPUTE} ({how} computes them; this can "
        "take minutes)"
    )


@dataclass(frozen=True)
class FabricSummary:
    """Facts about a fabric that ``info`` reports (bandwidths exact, GB/s)."""

    name: str
    compute_nodes: int
    switches: int
    physical_links: int
    directed_links: int
    roles: dict[str, int]
    ingress: tuple[Fraction, Fraction]
    egress: tuple[Fraction, Fraction]
    unbalanced: tuple[tuple[str, Fraction, Fraction], ...]  # switch id, in, out
    connectivity_error: str | None
    warnings: tuple[str, ...] = ()  # boxes whose GPUs meet only over PCIe/CPU
    notes: tuple[str, ...] = ()  # what the importer skipped, as the runtime does
    library: str = ""  # the NCCL/RCCL library the hardware runs (simulate's default)
    library_reason: str = ""  # why that one
    #: switches marked reduce/multicast, and the allreduce figures they change (GB/s)
    capable_switches: tuple[str, ...] = ()
    bounds: CapabilityBounds | None = None
    bounds_error: str = ""  # why the bounds were not computed (a cost limit)

    @property
    def balanced(self) -> bool:
        return not self.unbalanced

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "compute_nodes": self.compute_nodes,
            "switches": self.switches,
            "links": self.directed_links,
            "physical_links": self.physical_links,
            "roles": self.roles,
            "ingress_gbps": {"min": float(self.ingress[0]), "max": float(self.ingress[1])},
            "egress_gbps": {"min": float(self.egress[0]), "max": float(self.egress[1])},
            "balanced_switches": self.balanced,
            "unbalanced_switches": [
                {"id": sid, "in_gbps": float(bin_), "out_gbps": float(bout)}
                for sid, bin_, bout in self.unbalanced
            ],
            "connected": self.connectivity_error is None,
            "connectivity_error": self.connectivity_error,
            "warnings": list(self.warnings),
            "import_notes": list(self.notes),
            "library": self.library,
            "library_reason": self.library_reason,
            "capable_switches": list(self.capable_switches),
            "allreduce_bounds_error": self.bounds_error,
            "allreduce_bounds_gbps": None
            if self.bounds is None
            else {
                "forward_only": float(self.bounds.forward_only),
                "any_schedule": float(self.bounds.any_schedule),
                "capability": float(self.bounds.capability),
                "capability_exact": self.bounds.exact,
                "construction": self.bounds.construction,
            },
        }


def capability_lines(topo: Topology, collective: str, indent: str = "") -> list[str]:
    """The three figures of :mod:`solver.algorithm.capability_bounds` when some switch of
    ``topo`` reduces or multicasts (else nothing: the forward-only optimum is the only one);
    above :data:`BOUNDS_MAX_COMPUTE` compute nodes, a line saying how to get them."""
    marked = [n for n in topo.nodes if n.capabilities]
    if not marked:
        return []
    names = ", ".join(
        f"{n.id} ({'+'.join(c for c in CAPABILITIES if c in n.capabilities)})" for n in marked[:4]
    ) + (f" and {len(marked) - 4} more" if len(marked) > 4 else "")
    lines = [f"{indent}switches that reduce/multicast: {names}; {collective} bounds:"]
    compute = len(topo.compute_ids)
    if compute > BOUNDS_MAX_COMPUTE:
        return lines + [f"{indent}  {bounds_skipped_note(compute)}"]
    try:
        bounds = capability_bounds(topo, collective)
    except SolverError as exc:
        return lines + [f"{indent}  not computed: {exc}"]
    lines += [f"{indent}  {line}" for line in describe(bounds)]
    return lines


def _node_sums(
    caps: dict[tuple[str, str], Fraction],
) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """(bandwidth into, bandwidth out of) every node with a link, exact: numerators are added as
    integers per denominator (a fabric has few), so 150 000 links cost no Fraction additions."""
    into: dict[str, dict[int, int]] = {}
    out: dict[str, dict[int, int]] = {}
    for (u, v), bw in caps.items():
        num, den = bw.numerator, bw.denominator
        row = out.setdefault(u, {})
        row[den] = row.get(den, 0) + num
        row = into.setdefault(v, {})
        row[den] = row.get(den, 0) + num

    def exact(sums: dict[str, dict[int, int]]) -> dict[str, Fraction]:
        return {
            nid: sum((Fraction(n, d) for d, n in parts.items()), Fraction(0))
            for nid, parts in sums.items()
        }

    return exact(into), exact(out)


def summarize(
    topo: Topology, *, bounds: bool | None = None, progress: Callable[[str], None] | None = None
) -> FabricSummary:
    """Counts, per-compute bandwidth range, switch balance and connectivity of ``topo``.

    ``bounds``: compute the allreduce capability bounds when some switch reduces or multicasts
    (``None``: up to :data:`BOUNDS_MAX_COMPUTE` compute nodes, else a note says how).
    ``progress(step)`` is told each step before it starts."""
    say = progress or (lambda step: None)
    say("link bandwidths")
    caps = topo.directed_bandwidths()
    into, out = _node_sums(caps)
    compute = topo.compute_ids
    zero = Fraction(0)
    ingress = [into.get(c, zero) for c in compute] or [zero]
    egress = [out.get(c, zero) for c in compute] or [zero]
    unbalanced = tuple(
        (s, into.get(s, zero), out.get(s, zero))
        for s in topo.switch_ids
        if into.get(s, zero) != out.get(s, zero)
    )
    say("connectivity")
    try:
        validate(topo)
        problem = None
    except TopologyError as exc:
        problem = str(exc)
    roles = Counter(n.role or n.kind for n in topo.nodes)
    say("library")
    lib, why = pick_library(topo)
    capable = tuple(n.id for n in topo.nodes if n.capabilities)
    found, why_not = None, ""
    if bounds is None:
        bounds = len(compute) <= BOUNDS_MAX_COMPUTE
    if capable and problem is None and not bounds:
        why_not = bounds_skipped_note(len(compute))
    elif capable and problem is None:
        say("allreduce capability bounds")
        try:
            found = capability_bounds(topo, "allreduce")
        except SolverError as exc:  # over a cost limit: info stays quick and says so
            why_not = str(exc)
    say("scale-up check")
    warnings = tuple(scale_up_warnings(topo))
    return FabricSummary(
        name=topo.name,
        compute_nodes=len(compute),
        switches=len(topo.switch_ids),
        physical_links=len(topo.links),
        directed_links=len(caps),
        roles=dict(roles),
        ingress=(min(ingress), max(ingress)),
        egress=(min(egress), max(egress)),
        unbalanced=unbalanced,
        connectivity_error=problem,
        warnings=warnings,
        notes=tuple(topo.extra.get("import_notes", ())),
        library=lib.label,
        library_reason=why,
        capable_switches=capable,
        bounds=found,
        bounds_error=why_not,
    )


def gbps(value: Fraction) -> str:
    """A bandwidth for people: exact when short (300, 12.5), else 6 significant digits."""
    if value.denominator == 1:
        return str(value.numerator)
    as_float = float(value)
    text = f"{as_float:.6g}"
    return text if Fraction(text) == value else f"{text} ({value.numerator}/{value.denominator})"


def _range(pair: tuple[Fraction, Fraction]) -> str:
    lo, hi = pair
    return f"{gbps(lo)} GB/s" if lo == hi else f"{gbps(lo)} .. {gbps(hi)} GB/s"


#: unbalanced switches listed by the text report (all of them in --json)
UNBALANCED_SHOWN = 20


def format_text(s: FabricSummary, path: str) -> str:
    roles = ", ".join(f"{role} {count}" for role, count in sorted(s.roles.items()))
    lines = [
        f"name:             {s.name}",
        f"file:             {path}",
        f"compute nodes:    {s.compute_nodes}",
        f"switches:         {s.switches}",
        f"roles:            {roles}",
        f"links:            {s.physical_links} physical, {s.directed_links} directed",
        f"compute ingress:  {_range(s.ingress)}",
        f"compute egress:   {_range(s.egress)}",
        f"library:          {s.library} ({s.library_reason})",
    ]
    if s.balanced:
        lines.append("switch balance:   every switch balanced (in = out bandwidth)")
    else:
        lines.append(f"switch balance:   {len(s.unbalanced)} unbalanced switch(es):")
        for sid, bin_, bout in s.unbalanced[:UNBALANCED_SHOWN]:
            lines.append(f"                    {sid}: in {gbps(bin_)} GB/s, out {gbps(bout)} GB/s")
        if len(s.unbalanced) > UNBALANCED_SHOWN:
            lines.append(
                f"                    and {len(s.unbalanced) - UNBALANCED_SHOWN} more "
                "(--json lists them all)"
            )
    if s.connectivity_error is None:
        lines.append("connectivity:     every compute node reaches every other")
    else:
        lines.append(f"connectivity:     NO: {s.connectivity_error}")
    shown = ", ".join(s.capable_switches[:4]) + (
        f" and {len(s.capable_switches) - 4} more" if len(s.capable_switches) > 4 else ""
    )
    if s.bounds is not None:
        lines.append(f"reduce/multicast: {shown}; allreduce algbw bounds:")
        lines += [f"                    {line}" for line in describe(s.bounds)]
    elif s.bounds_error:
        lines.append(f"reduce/multicast: {shown}; allreduce bounds not computed: {s.bounds_error}")
    for note in s.notes:
        lines.append(f"note:             {note}")
    for w in s.warnings:
        lines.append(f"warning:          {w}")
    return "\n".join(lines)


#: fabrics from this many nodes report the steps of ``info`` on stderr as they start
PROGRESS_MIN_NODES = 10_000
#: files from this many bytes are announced on stderr before they are read
PROGRESS_MIN_BYTES = 10_000_000


class Steps:
    """``info: STEP ...`` lines on stderr, each ended with the time the previous step took."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self._step = ""
        self._t0 = 0.0

    def __call__(self, step: str) -> None:
        self.done()
        self._step, self._t0 = step, time.perf_counter()
        self.stream.write(f"info: {step} ...")
        self.stream.flush()

    def done(self) -> None:
        if self._step:
            self.stream.write(f" {time.perf_counter() - self._t0:.1f} s\n")
            self.stream.flush()
            self._step = ""


def register(subparsers):
    parser = add_command(
        subparsers,
        "info",
        "summarize a fabric file and check it",
        "Read a fabric file (v1 .json, .nodelink.json, .graphml or NCCL .xml), check it and print\n"
        "its name, node and link counts, the range of compute-node ingress/egress bandwidth,\n"
        "which switches are unbalanced (in != out bandwidth) and whether every compute node\n"
        "reaches every other. Exit code 2 with 'error: ...' if the file is unusable.",
        "forestcoll info sample_topologies/dgx_a100_2x.json --json",
    )
    parser.add_argument("topo", metavar="TOPO", help="fabric file")
    parser.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    parser.add_argument(
        "--bounds",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="compute the allreduce bounds of fabrics with reducing/multicasting switches "
        f"(default: up to {BOUNDS_MAX_COMPUTE} compute nodes; they are exact optima and "
        "2(N-1) max-flows, minutes at thousands of GPUs)",
    )
    add_fabric_options(parser)
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    steps = Steps()
    try:
        big_file = os.path.getsize(args.topo) >= PROGRESS_MIN_BYTES
    except OSError:
        big_file = False  # load_fabric says why in one line
    if big_file:
        steps(f"reading {printable(args.topo)}")
    try:
        topo = load_fabric(args.topo, args, check=False)
        if big_file:
            steps("checking the fabric")
        try:  # structural problems are errors right away; connectivity is reported first
            validate(topo, check_connectivity=False)
        except TopologyError as exc:
            raise TopologyError(f"{args.topo}: {exc}") from None
        large = big_file or len(topo.nodes) >= PROGRESS_MIN_NODES
        summary = summarize(topo, bounds=args.bounds, progress=steps if large else None)
    finally:
        steps.done()
    if args.json:
        print(strict_json.dumps(summary.to_json(), indent=2))
    else:
        print(format_text(summary, args.topo))
    if summary.connectivity_error is not None:
        sys.stdout.flush()
        raise TopologyError(f"{args.topo}: {summary.connectivity_error}")
    return 0
