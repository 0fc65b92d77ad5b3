"""``forestcoll export``: a schedule as MSCCL XML (checked by executing it) or JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from solver.cli._common import ProgressBar, add_command, add_fabric_options, load_fabric
from solver.io.files import atomic_write_text
from solver.io.schedule_json import schedule_json_text
from solver.model.errors import ForestCollError
from solver.model.plan import COMPRESS_MIN_N
from solver.model.schedule import COLLECTIVES, Schedule
from solver.model.values import printable

if TYPE_CHECKING:
    from solver.msccl.runtimes import Runtime

FORMATS = ("msccl-xml", "json", "mscclpp")


def register(subparsers) -> argparse.ArgumentParser:
    from solver.msccl import PROTOCOLS, RUNTIMES

    parser = add_command(
        subparsers,
        "export",
        "export a schedule as MSCCL XML or JSON",
        "Export the schedule of a fabric file (solved now) or of a results file (.h5, the stored\n"
        "schedule of that collective and --max-trees-per-root, or --schedule NAME).\n"
        "msccl-xml: the algorithm file MSCCL runtimes load (msccl-executor-nccl and RCCL from\n"
        "MSCCL_ALGO_DIR, legacy MSCCL from MSCCL_XML_FILES). Ranks are the fabric's compute nodes in\n"
        "file order unless --rank-order names them. The XML is executed symbolically and checked\n"
        "against the runtime's parser limits before it is written; when it cannot fit (steps per\n"
        "threadblock, threadblocks, channels) the error names the limit - export a schedule with\n"
        "a smaller --max-trees-per-root. json: the document of 'forestcoll solve --json'.\n"
        "mscclpp: an MSCCL++ v0.10.0 execution plan, executed symbolically before it is written\n"
        "(forestcoll check-plan). --bands: one file per message-size band where the simulator says\n"
        "ForestColl beats the library, none where the library wins, into a folder of their own.",
        "forestcoll export sample_topologies/dgx_a100_2x.json --collective allreduce --max-trees-per-root 1 "
        "--runtime msccl-executor -o algos/allreduce.xml",
    )
    parser.add_argument("source", metavar="TOPO|RESULTS.h5", help="fabric file or results file")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="output format (default: from the -o extension)",
    )
    parser.add_argument(
        "-c",
        "--collective",
        choices=COLLECTIVES,
        default="allgather",
        help="collective (default: allgather)",
    )
    parser.add_argument(
        "--max-trees-per-root",
        type=int,
        default=None,
        metavar="K",
        help="solve (or pick the stored schedule) with at most K trees per root; 1 gives the "
        "smallest XML (default: no limit)",
    )
    parser.add_argument(
        "--schedule", metavar="NAME", help="results file: the stored schedule to export"
    )
    parser.add_argument(
        "--runtime",
        choices=tuple(RUNTIMES),
        default="msccl-executor",
        help="target runtime (default: msccl-executor)",
    )
    parser.add_argument(
        "--proto", choices=PROTOCOLS, default="Simple", help="NCCL protocol (default: Simple)"
    )
    parser.add_argument(
        "--instances",
        type=int,
        default=1,
        metavar="N",
        help="repeat the program N times on more channels",
    )
    parser.add_argument(
        "--rank-order",
        metavar="FILE",
        help="file with one compute node id per line: rank 0, 1, ...",
    )
    parser.add_argument(
        "--min-bytes",
        type=int,
        default=0,
        help="smallest message size for this algorithm (default 0)",
    )
    parser.add_argument(
        "--max-bytes",
        type=int,
        default=None,
        help='largest message size for this algorithm (default: none, written as maxBytes="0"; '
        "the legacy runtime's own default 134217728); at most 2^63-1, the runtimes' int64",
    )
    parser.add_argument(
        "--shape-partners",
        type=int,
        default=None,
        metavar="P",
        help="when each GPU has more partners than the runtime has threadblocks per rank, export "
        "instead a schedule solved with every switch of more than P+1 GPUs replaced by window "
        "switches (at most P partners per GPU on it), verified on the real fabric, and "
        "print what it costs; halved while the program still needs too many threadblocks "
        "(default: an eighth of the runtime's threadblocks per rank, 8 for rccl; 0: refuse "
        "instead)",
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="output file ('-' for stdout; a folder with --bands)",
    )
    _add_deploy_options(parser)
    add_fabric_options(parser)
    parser.set_defaults(func=run)
    return parser


def _add_deploy_options(parser) -> None:
    """Options of :mod:`solver.cli.deploy`: MSCCL++ plans and size bands."""
    group = parser.add_argument_group("MSCCL++ plans and size bands")
    group.add_argument(
        "--channels",
        choices=("auto", "port"),
        default="auto",
        help="mscclpp: memory channels inside a box and port channels across boxes (auto, default) "
        "or port channels everywhere",
    )
    group.add_argument(
        "--max-threadblocks",
        type=int,
        default=None,
        metavar="N",
        help="mscclpp: threadblocks per rank that can run at once, the GPU's SM/CU count (default 108, "
        "an A100; H100 132, MI300X 304): every block of a plan must be resident",
    )
    group.add_argument(
        "--bands",
        action="store_true",
        help="simulate ForestColl variants (--max-trees-per-root 1, 2, 4, none) against the library "
        "model from 1 KiB to 4 GiB and write one file per size band ForestColl wins into the new or "
        "empty folder -o (none where the library wins); prints the table",
    )


def _format(args) -> str:
    if args.format:
        return args.format
    suffix = Path(args.output).suffix.lower()
    if suffix == ".xml":
        return "msccl-xml"
    if suffix == ".json":
        return "json"
    if getattr(args, "bands", False):
        return "msccl-xml"
    raise ForestCollError(
        f"cannot tell the format from {args.output!r}: use --format msccl-xml, json or mscclpp"
    )


def load_schedule(args, runtime: Runtime) -> Schedule:
    """The schedule to export: from a results file, or solved from a fabric file. ``runtime``:
    the target of an MSCCL XML export (a stored plan too large for it is refused unexpanded)."""
    k = args.max_trees_per_root
    if k is not None and k < 1:
        raise ForestCollError(f"--max-trees-per-root must be >= 1, got {k}")
    if Path(args.source).suffix.lower() in (".h5", ".hdf5"):
        from solver.algorithm.verify_stored import verify_stored
        from solver.io.hdf5.plans import read_plans
        from solver.io.hdf5.results import read_schedules

        stored = read_schedules(args.source)
        plans = read_plans(args.source)
        plan = None
        if args.schedule in plans and args.schedule not in stored:
            plan = plans[args.schedule]
        elif (
            not args.schedule
            and args.collective == "allgather"
            and k is None
            and plans
            and not [
                s
                for s in stored.values()
                if s.collective == "allgather" and not s.max_trees_per_root
            ]
        ):
            plan = plans[min(plans)]
        if plan is not None:
            verify_stored(plan, args.source, args.schedule or min(plans))
            return _expand_plan(plan, args, runtime)
        if args.schedule:
            if args.schedule not in stored:
                raise ForestCollError(
                    f"{args.source}: no schedule {args.schedule!r} (it has: {', '.join(stored) or 'none'})"
                )
            verify_stored(stored[args.schedule], args.source, args.schedule)
            return stored[args.schedule]
        matches = [
            name
            for name, s in stored.items()
            if s.collective == args.collective and s.max_trees_per_root == k
        ]
        if not matches:
            limit = f" with --max-trees-per-root {k}" if k else " without a tree limit"
            raise ForestCollError(
                f"{args.source}: no {args.collective} schedule{limit} (it has: {', '.join(stored) or 'none'}); "
                "use --schedule NAME"
            )
        verify_stored(stored[min(matches)], args.source, min(matches))
        return stored[min(matches)]
    topo = load_fabric(args.source, args)
    from solver import solve

    bar = ProgressBar()
    try:
        return solve(topo, collective=args.collective, max_trees_per_root=k, progress=bar)
    finally:
        bar.close()


def _expand_plan(plan, args, runtime: Runtime) -> Schedule:
    """A stored compressed plan as a full schedule, refused before expanding when the export
    could not take it (MSCCL: more ranks than the runtime reads; JSON: N² tree edges)."""
    n = len(plan.topology.compute_ids)
    if _format(args) == "msccl-xml":
        from solver.msccl.limits import check_rank_count

        check_rank_count(n, runtime)
    elif _format(args) == "json" and n >= COMPRESS_MIN_N:
        raise ForestCollError(
            f"{args.source}: the plan's full schedule has {plan.num_trees} trees of {n - 1} edges; "
            "a JSON document of it is not written (read the plan with 'forestcoll show')"
        )
    return plan.expand()


def run(args) -> int:
    fmt = _format(args)
    from solver import msccl

    runtime = msccl.runtime_named(args.runtime)
    order = msccl.read_rank_order(args.rank_order) if args.rank_order else None
    if args.bands or fmt == "mscclpp":
        from solver.cli import deploy

        if args.bands:
            return deploy.export_bands(args, lambda: _band_fabric(args), order, runtime)
        return deploy.export_mscclpp(args, load_schedule(args, runtime), order)
    schedule = load_schedule(args, runtime)
    if fmt == "json":
        text = schedule_json_text(schedule)
        if args.output == "-":
            sys.stdout.write(text)
        else:
            atomic_write_text(args.output, text)
            print(f"wrote {printable(args.output)}: {schedule.collective} schedule, k={schedule.k}")
        return 0
    options = msccl.ExportOptions(
        runtime, args.proto, args.instances, order, args.min_bytes, args.max_bytes
    )
    if args.output == "-":
        sys.stdout.write(msccl.export_xml(schedule, options))
        return 0
    try:
        report = msccl.write_xml(args.output, schedule, options)
    except msccl.PeersLimit as exc:
        if args.shape_partners == 0:
            raise
        print(f"not written as solved: {exc}")
        partners = args.shape_partners or runtime.max_threadblocks // 8
        while True:  # fewer partners until the program fits (channels and lanes add threadblocks)
            shaped = msccl.shape(schedule, partners, args.max_trees_per_root or 1)
            print(shaped.summary())
            try:
                report = msccl.write_xml(args.output, shaped.schedule, options)
                break
            except msccl.PeersLimit as again:
                if partners <= 2:
                    raise
                partners //= 2
                print(f"not written: {again}; shaping to {partners} partners per GPU")
        schedule = shaped.schedule
    out = Path(args.output)
    print(f"wrote {printable(str(out))}: {report.summary()}")
    ranks = msccl.rank_order(schedule, order)
    shown = ", ".join(f"{i}={v}" for i, v in enumerate(ranks[:4]))
    print(f"ranks: {shown}{', ...' if len(ranks) > 4 else ''} (--rank-order FILE to change)")
    from solver.cli import deploy

    warning = deploy.folder_warning(out, runtime)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    deploy.print_environment([out], runtime)
    return 0


def _band_fabric(args):
    """--bands solves and simulates several variants: it needs the fabric file."""
    if Path(args.source).suffix.lower() in (".h5", ".hdf5"):
        raise ForestCollError(
            "--bands needs the fabric file (it solves and simulates several variants)"
        )
    return load_fabric(args.source, args)
