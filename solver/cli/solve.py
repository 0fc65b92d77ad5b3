"""``forestcoll solve TOPO``: compute, verify and report a ForestColl schedule."""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction
from pathlib import Path

from solver.cli._common import ProgressBar, add_command, add_fabric_options, load_fabric
from solver.cli.info import capability_lines
from solver.io.files import atomic_write_text
from solver.io.schedule_json import schedule_json_text, write_schedule_json
from solver.model.errors import ForestCollError, SolverError
from solver.model.plan import COMPRESS_MIN_N, CompressedSchedule
from solver.model.scale_up import scale_up_warnings
from solver.model.schedule import COLLECTIVES, BottleneckCut, Schedule
from solver.model.topology import Topology
from solver.model.values import printable

PHASES = ("optimum", "switch_removal", "trees", "paths")


def register(subparsers) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        "solve",
        "compute the optimal schedule of a fabric",
        "Compute a throughput-optimal ForestColl schedule for a fabric file (.json, "
        ".nodelink.json, .graphml, NCCL .xml) and check it with the independent verifier.\n"
        "Prints the exact optimum (GB/s), k (trees per root), the number and heights of the trees,\n"
        "the bottleneck cut that limits the collective, the time of each solver phase and any\n"
        "warnings. --json prints the schedule document on stdout instead; -o saves it (.json,\n"
        "or .h5 results file). Errors are one line on stderr with exit code 2.\n"
        f"From {COMPRESS_MIN_N} compute nodes on fabrics of identical boxes (and with --compressed)\n"
        "the allgather schedule is kept as a compressed plan: the trees of one box's roots plus\n"
        "the automorphism that moves them to the other boxes (racks of a 3-tier Clos, DGX nodes\n"
        "of a SuperPOD: zones and pods move along); it is verified without expanding it and\n"
        "saved to .h5 ('forestcoll show' lists it). A plan has no --json document: with --json\n"
        "the automatic plan is off.",
        "forestcoll solve sample_topologies/dgx_a100_2x.json --collective allreduce --max-trees-per-root 4 "
        "-o schedule.h5",
    )
    parser.add_argument("topology", metavar="TOPO", help="fabric file to solve")
    parser.add_argument(
        "-c",
        "--collective",
        choices=COLLECTIVES,
        default="allgather",
        help="collective to schedule (default: allgather)",
    )
    parser.add_argument(
        "--max-trees-per-root",
        type=int,
        default=None,
        metavar="K",
        help="at most K trees per root (e.g. 1 for runtimes with few thread blocks); the "
        "schedule is the best one under that limit (default: no limit, exact optimum)",
    )
    parser.add_argument("--json", action="store_true", help="print the schedule as JSON on stdout")
    parser.add_argument(
        "--optimum-only",
        action="store_true",
        help="only the exact optimum and its bottleneck cut, no trees (seconds at 32 768 GPUs; "
        "one max-flow per orbit of verified automorphisms); --json prints a compact document. "
        "Also what solve falls back to when the full schedule is over its size limit",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="also save the schedule: .json (the --json document) or .h5 (results file)",
    )
    parser.add_argument(
        "--verify",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="re-check the schedule with the independent verifier (default: on; it is cheap)",
    )
    parser.add_argument(
        "--compressed",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="keep the allgather schedule as a compressed plan: the trees of the roots of one "
        "box plus the automorphism that moves them to every other box (saved to .h5 only). "
        f"Default: on from {COMPRESS_MIN_N} compute nodes when the fabric has identical boxes "
        "(not with --json)",
    )
    add_fabric_options(parser)
    parser.set_defaults(func=run)
    return parser


def _wants_plan(args, topo: Topology) -> bool:
    """Whether to solve a compressed plan: ``--compressed``, or automatic on large box fabrics."""
    plain = args.collective == "allgather" and args.max_trees_per_root is None
    if args.compressed:
        if not plain:
            raise ForestCollError(
                "--compressed plans are allgather schedules without --max-trees-per-root"
            )
        return True
    if args.compressed is False or args.json or not plain:
        return False
    if len(topo.compute_ids) < COMPRESS_MIN_N:
        return False
    from solver.algorithm.symmetry import box_symmetry

    return box_symmetry(topo, structural=False, nested=True) is not None


def _run_plan(args, topo: Topology, fabric_warnings: list[str]) -> int:
    """Solve, verify and save a compressed plan (see :mod:`solver.algorithm.compressed`)."""
    if args.json:
        raise ForestCollError(
            "a compressed plan has no --json document (its full schedule holds "
            "N² tree edges); save it with -o FILE.h5, or use --no-compressed"
        )
    if args.output and _output_kind(args.output) != "h5":
        raise ForestCollError(f"{args.output}: a compressed plan is saved to a .h5 results file")
    from solver.algorithm.compressed import solve_compressed

    bar = ProgressBar()
    started = time.perf_counter()
    try:
        plan = solve_compressed(topo, progress=bar)
    finally:
        bar.close()
    elapsed = time.perf_counter() - started
    verified = None
    if args.verify:
        from solver.algorithm.verify_plan import verify_compressed

        t0 = time.perf_counter()
        try:
            verify_compressed(plan)
        except SolverError as exc:
            raise SolverError(f"the plan failed verification: {exc}") from None
        verified = time.perf_counter() - t0
    if args.output:
        from solver.io.hdf5.plans import write_plan

        try:
            write_plan(args.output, plan)
        except OSError as exc:
            raise ForestCollError(f"{args.output}: cannot write: {exc.strerror or exc}") from None
    print(format_plan_report(plan, verified=verified, elapsed=elapsed, source=args.topology))
    for line in capability_lines(topo, plan.base.collective, "  "):
        print(line)
    for w in fabric_warnings:
        print(f"  warning: {w}")
    if args.output:
        print(f"saved: {printable(args.output)} (plan {plan.collective!r})")
    return 0


def run(args) -> int:
    if args.max_trees_per_root is not None and args.max_trees_per_root < 1:
        raise SolverError(f"--max-trees-per-root must be >= 1, got {args.max_trees_per_root}")
    if args.output:
        _output_kind(args.output)  # refuse an unknown extension before the (long) solve
    if args.optimum_only and (args.compressed or args.max_trees_per_root is not None):
        raise ForestCollError(
            "--optimum-only computes no trees: it takes neither --compressed nor "
            "--max-trees-per-root"
        )
    if args.optimum_only and args.output and _output_kind(args.output) != "json":
        raise ForestCollError(f"{args.output}: --optimum-only saves a .json document only")
    topo = load_fabric(args.topology, args)
    fabric_warnings = scale_up_warnings(topo)
    if args.json:  # stdout holds the document: warn on stderr
        for w in fabric_warnings:
            print(f"warning: {w}", file=sys.stderr)
    if args.optimum_only:
        return _run_optimum(args, topo, fabric_warnings)
    over = _over_size(args, topo)
    if not (over and args.json) and _wants_plan(args, topo):
        return _run_plan(args, topo, fabric_warnings)
    if over:
        note = f"{over}: the optimum and bottleneck cut only (no trees)"
        print(f"note: {note}", file=sys.stderr)
        return _run_optimum(args, topo, fabric_warnings, note=note)
    from solver import solve
    from solver.algorithm.cost import CostLimit

    bar = ProgressBar()
    started = time.perf_counter()
    try:
        schedule = solve(
            topo,
            collective=args.collective,
            max_trees_per_root=args.max_trees_per_root,
            progress=bar,
        )
    except CostLimit as exc:
        # a phase of the full solve is over its limit (a 4096-GPU SuperPOD's switch removal):
        # the optimum and the cut still are what the user came for
        bar.close()
        note = f"{exc}: the optimum and bottleneck cut only (no trees)"
        print(f"note: {note}", file=sys.stderr)
        return _run_optimum(args, topo, fabric_warnings, note=note)
    finally:
        bar.close()
    elapsed = time.perf_counter() - started
    verified = False
    if args.verify:
        from solver.algorithm.verify import verify_schedule

        try:
            verify_schedule(schedule)
        except SolverError as exc:
            raise SolverError(f"the schedule failed verification: {exc}") from None
        verified = True
    if args.output:
        save_schedule(args.output, schedule)
    if args.json:
        write_schedule_json(schedule, sys.stdout)
    else:
        print(format_report(schedule, verified=verified, elapsed=elapsed, source=args.topology))
        for line in capability_lines(topo, schedule.collective, "  "):
            print(line)
        for w in fabric_warnings:
            print(f"  warning: {w}")
        if args.output:
            print(f"saved: {printable(args.output)}")
    return 0


def _over_size(args, topo: Topology) -> str | None:
    """Why the full schedule of ``topo`` is refused (its size limit), or None."""
    from solver.algorithm.cost import CostLimit, check_schedule_size

    try:
        check_schedule_size(len(topo.compute_ids), 2 if args.collective == "allreduce" else 1)
    except CostLimit as exc:
        return str(exc)
    return None


def _run_optimum(args, topo: Topology, fabric_warnings: list[str], note: str = "") -> int:
    """The exact optimum and bottleneck cut(s) only (:mod:`solver.algorithm.optimum_only`)."""
    if args.output and _output_kind(args.output) != "json":
        raise ForestCollError(
            f"{args.output}: {note or '--optimum-only'}; only a .json document can be saved"
        )
    from solver.algorithm.optimum_only import solve_optimum

    bar = ProgressBar()
    started = time.perf_counter()
    try:
        result = solve_optimum(topo, args.collective, progress=bar)
    finally:
        bar.close()
    elapsed = time.perf_counter() - started
    if args.output or args.json:
        text = optimum_json_text(result, note)
    if args.output:
        try:
            atomic_write_text(args.output, text)
        except OSError as exc:
            raise ForestCollError(f"{args.output}: cannot write: {exc.strerror}") from None
    if args.json:
        sys.stdout.write(text)
        return 0
    print(format_optimum_report(result, elapsed=elapsed, source=args.topology, note=note))
    for line in capability_lines(topo, args.collective, "  "):
        print(line)
    for w in fabric_warnings:
        print(f"  warning: {w}")
    if args.output:
        print(f"saved: {printable(args.output)}")
    return 0


def optimum_json_text(result, note: str = "") -> str:
    """The compact ``--optimum-only --json`` document (one line): optimum, cut(s), timings."""
    from solver.io import strict_json

    def cut_doc(cut: BottleneckCut) -> dict:
        return {
            "compute_nodes_inside": cut.compute_nodes_inside,
            "bandwidth_gbps": float(cut.egress_bandwidth),
            "bandwidth_exact": _exact(cut.egress_bandwidth),
            "links": [[u, v, float(b)] for u, v, b in cut.links],
            "nodes": list(cut.nodes),
        }

    doc = {
        "format": "forestcoll-optimum",
        "version": 1,
        "topology": result.topology.name,
        "collective": result.collective,
        "compute_nodes": len(result.topology.compute_ids),
        "algbw_gbps": float(result.algbw),
        "algbw_exact": _exact(result.algbw),
        "phases": [
            {
                "collective": p.collective,
                "algbw_gbps": float(p.algbw),
                "algbw_exact": _exact(p.algbw),
                "k": p.k,
                "max_flow_sinks": p.orbits,
                "bottleneck": cut_doc(p.cut),
            }
            for p in result.phases
        ],
        "timings": dict(result.timings),
        "note": note or None,
    }
    return strict_json.dumps(doc, separators=(",", ":")) + "\n"


def format_optimum_report(
    result, *, elapsed: float | None, source: str = "", note: str = ""
) -> str:
    """The summary of ``forestcoll solve --optimum-only``."""
    topo = result.topology
    switches = len(topo.switch_ids)
    lines = [
        f"{topo.name or source}: {result.collective} on {len(topo.compute_ids)} compute nodes, "
        f"{switches} {'switch' if switches == 1 else 'switches'}",
        f"  optimum:    {_gbps(result.algbw)} (exact {_exact(result.algbw)})",
    ]
    for p in result.phases:
        indent = "  "
        if len(result.phases) > 1:
            lines.append(f"  {p.collective} phase: optimum {_gbps(p.algbw)}")
            indent = "    "
        lines.append(f"{indent}bottleneck: {_describe_phase_cut(topo, p)}")
        lines.append(f"{indent}sinks:      {p.orbit_text}: one max-flow each")
    parts = [f"{name} {value:.3g} s" for name, value in result.timings.items()]
    lines.append("  phases:     " + ", ".join(parts))
    if elapsed is not None:
        lines.append(f"  total:      {elapsed:.3g} s")
    lines.append(
        "  verified:   the cut's bound N/|S∩Vc|·B(S) re-computed from the fabric equals the "
        "optimum; no trees (" + (note if note else "--optimum-only") + ")"
    )
    return "\n".join(lines)


def _describe_phase_cut(topo: Topology, p) -> str:
    n = len(topo.compute_ids)
    cut = p.cut
    who = describe_nodes(topo, set(cut.nodes))
    inside = set(cut.nodes)
    switches = sum(1 for s in topo.switch_ids if s in inside)
    if switches:
        who += f" (with {switches} {'switch' if switches == 1 else 'switches'})"
    verb = "send out" if p.collective == "allgather" else "receive"
    bound = n * cut.egress_bandwidth / cut.compute_nodes_inside
    return (
        f"{who} can {verb} only {_gbps(cut.egress_bandwidth)} over {len(cut.links)} "
        f"{_plural('link', len(cut.links))}: N/|S∩Vc|·B(S) = {n}/"
        f"{cut.compute_nodes_inside} · {float(cut.egress_bandwidth):.6g} = {_gbps(bound)}"
    )


# ----------------------------------------------------------------------------- output files
def _output_kind(path: str) -> str:
    name = Path(path).name.lower()
    if name.endswith(".json"):
        return "json"
    if name.endswith((".h5", ".hdf5")):
        return "h5"
    raise ForestCollError(f"{path}: unknown output type (use .json or .h5)")


def save_schedule(path: str, schedule: Schedule) -> None:
    """Write ``schedule`` to ``path``: JSON document (atomic) or HDF5 results file."""
    if _output_kind(path) == "json":
        try:
            atomic_write_text(path, schedule_json_text(schedule))
        except OSError as exc:
            raise ForestCollError(f"{path}: cannot write: {exc.strerror}") from None
        return
    from solver.io.hdf5 import results as h5
    from solver.simulate.estimate import model_tables

    try:
        h5.write_schedule(path, schedule, tables=model_tables)
    except OSError as exc:
        raise ForestCollError(f"{path}: cannot write: {exc.strerror or exc}") from None


# ----------------------------------------------------------------------------- the report
def _gbps(value: Fraction) -> str:
    text = f"{float(value):.6g}"
    return f"{text} GB/s"


def _exact(value: Fraction) -> str:
    return (
        str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    )


def _plural(noun: str, count: int) -> str:
    return noun if count == 1 else noun + "s"


def describe_nodes(topo: Topology, inside: set[str]) -> str:
    """'the 8 GPUs of group b0', 'the 3 GPUs c0, c1, c2' or 'the 15 GPUs other than b1.gpu3'."""
    compute = topo.compute_ids
    nodes = {n.id: n for n in topo.nodes}
    members = [c for c in compute if c in inside]
    roles = {nodes[c].role for c in compute}
    noun = roles.pop().upper() if len(roles) == 1 and "" not in roles else "compute node"
    noun_n = _plural(noun, len(members))
    groups: dict[str, list[str]] = {}
    for c in compute:
        groups.setdefault(nodes[c].group or "", []).append(c)
    whole = sorted(g for g, ids in groups.items() if g and all(c in inside for c in ids))
    if whole and sorted(c for g in whole for c in groups[g]) == sorted(members):
        label = "group" if len(whole) == 1 else "groups"
        names = ", ".join(whole[:6]) + (", ..." if len(whole) > 6 else "")
        return f"the {len(members)} {noun_n} of {label} {names}"
    outside = [c for c in compute if c not in inside]
    if len(members) <= 4:
        return f"the {len(members)} {noun_n} {', '.join(members)}"
    if len(outside) <= 3:
        return f"the {len(members)} {noun_n} other than {', '.join(outside)}"
    return f"the {len(members)} {noun_n} {', '.join(members[:4])}, ..."


def describe_cut(schedule: Schedule, cut: BottleneckCut) -> str:
    """The bottleneck in words with its numbers."""
    topo = schedule.topology
    n = len(topo.compute_ids)
    inside = set(cut.nodes)
    who = describe_nodes(topo, inside)
    switches = sum(1 for s in topo.switch_ids if s in inside)
    if switches:
        who += f" (with {switches} {'switch' if switches == 1 else 'switches'})"
    verb = "send out" if schedule.collective == "allgather" else "receive"
    bound = n * cut.egress_bandwidth / cut.compute_nodes_inside
    return (
        f"{who} can {verb} only {_gbps(cut.egress_bandwidth)} over {len(cut.links)} "
        f"{_plural('link', len(cut.links))}: N/|S∩Vc|·B(S) = {n}/"
        f"{cut.compute_nodes_inside} · {float(cut.egress_bandwidth):.6g} = {_gbps(bound)}"
    )


def _tree_lines(s: Schedule, indent: str) -> list[str]:
    heights = [t.height for t in s.trees]
    line = (
        f"{indent}schedule:   {_gbps(s.algbw_exact)} with k = {s.k} "
        f"{_plural('tree', s.k)} per root, {len(s.trees)} distinct "
        f"{_plural('tree', len(s.trees))}"
    )
    if heights:
        line += (
            f", heights {min(heights)}..{max(heights)}"
            if min(heights) != max(heights)
            else f", height {heights[0]}"
        )
    lines = [line]
    if s.max_trees_per_root is not None:
        lines.append(
            f"{indent}limit:      at most {s.max_trees_per_root} trees per root "
            f"({100 * float(s.algbw_exact / s.optimal_algbw_exact):.1f}% of the optimum)"
        )
    lines.append(f"{indent}bottleneck: {describe_cut(s, s.bottleneck)}")
    return lines


def _timing_line(s: Schedule, indent: str) -> str:
    parts = [f"{p} {s.timings[p]:.3g} s" for p in PHASES if p in s.timings]
    parts += [f"{p} {v:.3g} s" for p, v in s.timings.items() if p not in PHASES]
    return f"{indent}phases:     " + (", ".join(parts) if parts else "(no timings)")


def format_report(
    schedule: Schedule, *, verified: bool, elapsed: float | None = None, source: str = ""
) -> str:
    """The human-readable summary printed by ``forestcoll solve``."""
    topo = schedule.topology
    s = schedule
    head = (
        f"{topo.name or source}: {s.collective} on {len(topo.compute_ids)} compute nodes, "
        f"{len(topo.switch_ids)} {'switch' if len(topo.switch_ids) == 1 else 'switches'}"
    )
    lines = [
        head,
        f"  optimum:    {_gbps(s.optimal_algbw_exact)} (exact {_exact(s.optimal_algbw_exact)})",
    ]
    if s.phases:
        lines.append(
            f"  schedule:   {_gbps(s.algbw_exact)} (exact {_exact(s.algbw_exact)}) = "
            "M / (reduce-scatter time + allgather time)"
        )
        for p in s.phases:
            lines.append(f"  {p.collective} phase: optimum {_gbps(p.optimal_algbw_exact)}")
            lines += _tree_lines(p, "    ")
            lines.append(_timing_line(p, "    "))
    else:
        lines += _tree_lines(s, "  ")
        lines.append(_timing_line(s, "  "))
    if elapsed is not None:
        lines.append(f"  total:      {elapsed:.3g} s")
    warnings = list(s.warnings) + [w for p in s.phases for w in p.warnings if w not in s.warnings]
    for w in warnings:
        lines.append(f"  warning: {w}")
    lines.append(
        "  verified:   yes (independent exact check of trees, paths, loads and algbw)"
        if verified
        else "  verified:   no (--no-verify)"
    )
    return "\n".join(lines)


def format_plan_report(
    plan: CompressedSchedule,
    *,
    verified: float | None,
    elapsed: float | None = None,
    source: str = "",
) -> str:
    """The summary printed by ``forestcoll solve`` for a compressed plan."""
    s = plan.base
    topo = s.topology
    reps = plan.representatives
    heights = [t.height for t in reps]
    lines = [
        f"{topo.name or source}: {s.collective} on {len(topo.compute_ids)} compute nodes, "
        f"{len(topo.switch_ids)} {'switch' if len(topo.switch_ids) == 1 else 'switches'}",
        f"  optimum:    {_gbps(s.optimal_algbw_exact)} (exact {_exact(s.optimal_algbw_exact)})",
        f"  plan:       {_gbps(s.algbw_exact)} with k = {s.k} {_plural('tree', s.k)} per root, "
        f"compressed: {len(reps)} representative {_plural('tree', len(reps))} x {plan.order} "
        f"translates = {plan.num_trees} trees, heights {min(heights)}..{max(heights)}",
        f"  bottleneck: {describe_cut(s, s.bottleneck)}",
        _timing_line(s, "  "),
    ]
    if elapsed is not None:
        lines.append(f"  total:      {elapsed:.3g} s")
    lines += [f"  warning: {w}" for w in s.warnings]
    lines.append(
        f"  verified:   yes in {verified:.3g} s (representative trees in full, the generator an "
        "automorphism of the fabric, loads and algbw from link-orbit sums)"
        if verified is not None
        else "  verified:   no (--no-verify)"
    )
    return "\n".join(lines)
