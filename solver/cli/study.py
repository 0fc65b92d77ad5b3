"""``forestcoll study failures|upgrade|sweep``: design studies on a Dask cluster."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from solver.cli._common import add_command, add_fabric_options, load_fabric
from solver.io import strict_json
from solver.model.errors import ForestCollError
from solver.model.schedule import COLLECTIVES
from solver.model.values import printable

_ENGINE_HELP = (
    "\nEvery study runs on Dask: a local cluster of one worker process per core (--workers N),\n"
    "or an existing cluster (--scheduler tcp://HOST:PORT). Rows stream into the results file\n"
    "(-o FILE.h5, group /studies/NAME) as they finish; --resume computes only the missing rows.\n"
    "Errors are one line on stderr with exit code 2."
)


def register(subparsers) -> argparse.ArgumentParser:
    from solver.cli import _Parser

    parser = add_command(
        subparsers,
        "study",
        "failure, upgrade and sweep studies (many solves, on Dask)",
        "Design studies: the exact optimum of many modified fabrics.\n"
        "  failures  every link / switch / NIC removed in turn (N-1 resilience)\n"
        "  upgrade   every link or class of links upgraded, ranked by gain\n"
        "  sweep     a template over a grid of parameters, or a folder of fabric files\n"
        "Run 'forestcoll study STUDY --help' for each." + _ENGINE_HELP,
        "forestcoll study failures sample_topologies/dgx_a100_2x.json --json",
    )
    sub = parser.add_subparsers(dest="study", metavar="STUDY", parser_class=_Parser)
    parser.set_defaults(func=lambda args: _no_study(parser))

    fail = add_command(
        sub,
        "failures",
        "N-1 resilience: each element removed in turn",
        "For every single element removed (links, switches, NICs; compute nodes on request):\n"
        "the exact optimum, the change against the intact fabric, the new bottleneck cut and\n"
        "whether compute nodes got disconnected (a result, not an error). Elements that a swap\n"
        "of whole boxes maps onto each other share one solve." + _ENGINE_HELP,
        "forestcoll study failures sample_topologies/dgx_a100_2x.json --elements links,switches -o results.h5",
    )
    fail.add_argument("topology", metavar="TOPO", help="fabric file")
    fail.add_argument(
        "--elements",
        default="links,switches,nics",
        help="comma-separated kinds to remove: links, switches, nics, compute "
        "(default: links,switches,nics)",
    )
    _common_options(fail)
    fail.set_defaults(func=run_failures)

    up = add_command(
        sub,
        "upgrade",
        "upgrade advisor: optimum after upgrading each link or class",
        "The exact optimum after upgrading each link (--by link) or each class of links (--by\n"
        "class: same roles at both ends and same bandwidth), ranked by gain. An upgrade that\n"
        "crosses the bottleneck but gains nothing is 'blocked': another cut binds right\n"
        "behind it; 'headroom' is the optimum after the upgrade (that next cut's value).\n"
        "Links off the bottleneck cannot gain and are filled in without a solve." + _ENGINE_HELP,
        "forestcoll study upgrade sample_topologies/dgx_h100_rail_2x.json --factor 2 --by class",
    )
    up.add_argument("topology", metavar="TOPO", help="fabric file")
    how = up.add_mutually_exclusive_group()
    how.add_argument("--factor", help="multiply the bandwidth by this (default 2)")
    how.add_argument("--add", metavar="GBPS", help="add this many GB/s instead")
    up.add_argument(
        "--by",
        choices=("link", "class"),
        default="link",
        help="upgrade each link, or each class of links (default: link)",
    )
    _common_options(up)
    up.set_defaults(func=run_upgrade)

    sw = add_command(
        sub,
        "sweep",
        "optimum, k, tree heights and solve time over a parameter grid",
        "Solve a template over the grid of --param values (every combination), or every\n"
        "fabric file of --topologies DIR: the optimum, k, tree heights and solve time per\n"
        "point; 'change' is against the first point. Templates: forestcoll convert --help."
        + _ENGINE_HELP,
        "forestcoll study sweep --template dgx_h100_rail --param n=2,4,8 --param nic_bw=25,50",
    )
    src = sw.add_mutually_exclusive_group(required=True)
    src.add_argument("--template", metavar="NAME", help="template to sweep")
    src.add_argument("--topologies", metavar="DIR", help="sweep every fabric file in DIR")
    sw.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=V1,V2,...",
        help="a template parameter and its values (repeat for a grid)",
    )
    _common_options(sw, symmetry=False)
    sw.set_defaults(func=run_sweep)
    return parser


def _common_options(p: argparse.ArgumentParser, symmetry: bool = True) -> None:
    p.add_argument(
        "-c",
        "--collective",
        choices=COLLECTIVES,
        default="allgather",
        help="collective (default: allgather)",
    )
    p.add_argument("-o", "--output", metavar="FILE.h5", help="stream rows into this results file")
    p.add_argument("--name", help="study name in the file (default: STUDY_COLLECTIVE)")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the rows already in the file and compute only the others",
    )
    p.add_argument("--json", action="store_true", help="print the study as JSON on stdout")
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="worker processes of the local cluster (default: one per core)",
    )
    p.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="run on this existing Dask cluster instead of a local one",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        metavar="N",
        help="elements per task (default: chosen from the study size)",
    )
    if symmetry:
        p.add_argument(
            "--no-symmetry",
            dest="symmetry",
            action="store_false",
            help="solve every element, even those a box swap maps onto another",
        )
    if "topology" in {a.dest for a in p._actions}:
        add_fabric_options(p)


def _no_study(parser) -> int:
    parser.print_help()
    return 2


class StudyProgress:
    """``rows done / total``, rate and ETA on one stderr line (only on a terminal)."""

    def __init__(self, stream=None, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.started = time.monotonic()
        self._first: tuple[float, int] | None = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if self._first is None:
            self._first = (now, done)
        t0, d0 = self._first
        rate = (done - d0) / (now - t0) if now > t0 and done > d0 else 0.0
        eta = f"{(total - done) / rate:6.0f} s" if rate > 0 else "     ? s"
        width = 30
        frac = done / total if total else 1.0
        bar = "#" * int(round(width * frac)) + "-" * (width - int(round(width * frac)))
        self.stream.write(f"\rrows {done}/{total} [{bar}] {100 * frac:5.1f}%  ETA {eta}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 72 + "\r")
            self.stream.flush()


def _check_engine_args(args) -> None:
    if args.batch_size is not None and args.batch_size < 1:
        raise ForestCollError(f"--batch-size must be >= 1, got {args.batch_size}")
    if args.workers is not None and args.scheduler:
        raise ForestCollError("--workers sizes the local cluster; leave it out with --scheduler")
    if args.resume and not args.output:
        raise ForestCollError("--resume needs the results file (-o FILE.h5)")
    if args.output and not args.output.lower().endswith((".h5", ".hdf5")):
        raise ForestCollError(f"{args.output}: a study is saved in an HDF5 results file (.h5)")


def _run(plan, args) -> int:
    from solver.studies import DaskEngine, run_study
    from solver.studies.report import text, to_json

    bar = StudyProgress()
    try:
        with DaskEngine(workers=args.workers, scheduler=args.scheduler) as engine:
            result = run_study(
                plan,
                engine,
                output=args.output,
                name=args.name,
                resume=args.resume,
                progress=bar,
                batch_size=args.batch_size,
            )
    finally:
        bar.close()
    if args.json:
        strict_json.dump(to_json(result), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(text(result))
        if args.output:
            print(f"saved: {printable(args.output)} (/studies/{result.name})")
    return 0


def run_failures(args) -> int:
    from solver.studies import failure_plan
    from solver.studies.elements import parse_failure_kinds

    _check_engine_args(args)
    kinds = parse_failure_kinds(args.elements)
    topo = load_fabric(args.topology, args)
    return _run(failure_plan(topo, kinds, args.collective, args.symmetry), args)


def run_upgrade(args) -> int:
    from solver.studies import upgrade_plan

    _check_engine_args(args)
    topo = load_fabric(args.topology, args)
    factor = args.factor if args.factor is not None or args.add is not None else 2
    plan = upgrade_plan(
        topo,
        factor=factor,
        add=args.add,
        by=args.by,
        collective=args.collective,
        use_symmetry=args.symmetry,
    )
    return _run(plan, args)


def run_sweep(args) -> int:
    from solver.studies import parse_param, sweep_plan

    _check_engine_args(args)
    if args.topologies:
        if args.param:
            raise ForestCollError("--param applies to --template, not to --topologies")
        plan = sweep_plan(topologies=_load_folder(args.topologies), collective=args.collective)
    else:
        params = [parse_param(p) for p in args.param]
        plan = sweep_plan(template=args.template, params=params, collective=args.collective)
    return _run(plan, args)


def _load_folder(folder: str) -> dict:
    from solver.io.formats import load

    path = Path(folder)
    if not path.is_dir():
        raise ForestCollError(f"{folder}: not a folder")
    out = {}
    for file in sorted(path.iterdir()):
        if file.is_file() and file.name.lower().endswith((".json", ".graphml", ".xml")):
            out[file.name] = load(file)
    return out
