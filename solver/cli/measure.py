"""``forestcoll measure import LOG``: store nccl-tests / rccl-tests results next to predictions."""

from __future__ import annotations

import sys

import numpy as np

from solver.cli._common import add_command, add_fabric_options, load_fabric
from solver.model.errors import ForestCollError

COLLECTIVES = ("allgather", "reduce-scatter", "allreduce")


def register(subparsers):
    p = add_command(
        subparsers,
        "measure",
        "import real measurements (nccl-tests / rccl-tests logs) into a results file",
        "Work with measured results. Sub-command:\n"
        "  import LOG --topology TOPO -o RESULTS.h5   read an nccl-tests/rccl-tests text log or\n"
        "      its -J JSON output, compare it with the ForestColl bound of TOPO and store it in\n"
        "      /results of the HDF5 file (measured time/algbw next to the predicted ones).\n"
        "Comparisons use time and algbw (busbw is the same number times a collective factor).",
        "forestcoll measure import all_gather.log --topology sample_topologies/mi250_2x.json -o results.h5",
    )
    sub = p.add_subparsers(dest="measure_command", metavar="SUBCOMMAND")
    imp = sub.add_parser(
        "import",
        help="import an nccl-tests/rccl-tests log",
        description=(
            "Read LOG (nccl-tests/rccl-tests text table, old or new column layout, or -J JSON),\n"
            "take its run of the collective (-c picks one run of a log holding several, as\n"
            "'run all collectives' scripts write; a single run's collective comes from the log),\n"
            "and store a table\n"
            "/results/<name> with the measured time/algbw and the predicted bound\n"
            "(size / optimal algbw of TOPO). The ForestColl schedule is solved and stored too if the\n"
            "file does not hold one for that collective. Out-of-place columns are used (in-place\n"
            "when out-of-place numbers are missing); rows with #wrong != 0 are dropped and listed;\n"
            "a log whose '#  Rank' lines count other than TOPO's compute nodes is refused.\n"
            "mpirun --tag-output / -prepend-rank / srun -l prefixes and NCCL INFO lines (also\n"
            "spliced into a row) are skipped; a table inside a markdown or text file is found.\n"
            "The run's settings the log shows (nccl version, NCCL_ALGO, NCCL_PROTO,\n"
            "NCCL_MAX_NCHANNELS, NVLS on/off...) are printed and stored; a row above the\n"
            "forward-only bound is printed with its reason (e.g. NVLS in-switch reduction).\n"
            "The --library value that expresses the run's settings (channel caps, TCPX...) on\n"
            "TOPO's hardware is printed and stored (attribute 'library')."
        ),
        epilog=(
            "example:\n  forestcoll measure import tests/data/nccl_tests_allgather_2xmi250.log "
            "--topology sample_topologies/mi250_2x.json -o results.h5"
        ),
        formatter_class=p.formatter_class,
    )
    imp.add_argument("log", metavar="LOG", help="nccl-tests / rccl-tests output (text or JSON)")
    imp.add_argument("--topology", "-t", required=True, metavar="TOPO", help="the fabric measured")
    add_fabric_options(imp)
    imp.add_argument(
        "-o", "--output", required=True, metavar="RESULTS.h5", help="HDF5 results file"
    )
    imp.add_argument(
        "--collective",
        "-c",
        choices=COLLECTIVES,
        help="the collective's run to import (default: the log's only one; a log without a "
        "collective name takes this one)",
    )
    imp.add_argument(
        "--name", help="table name under /results (default measured_<collective>_<tool>)"
    )
    imp.add_argument(
        "--algorithm",
        default="measured",
        help="label of what was measured, e.g. rccl-ring or forestcoll (default measured)",
    )
    imp.set_defaults(func=run_import)
    p.set_defaults(func=lambda args: _no_sub(p))
    return p


def _no_sub(parser) -> int:
    parser.print_help(sys.stderr)
    return 2


def run_import(args) -> int:
    from solver.algorithm.pipeline import solve
    from solver.model.results import ResultTable
    from solver.simulate.nccl_tests import above_bound_reason, load_log

    if not args.output.endswith((".h5", ".hdf5")):
        raise ForestCollError(f"{args.output}: results files end in .h5")
    topo = load_fabric(args.topology, args)
    meas = load_log(args.log, args.collective)
    n = len(topo.compute_ids)
    if meas.ranks and meas.ranks != n:
        raise ForestCollError(
            f"{args.log} ran on {meas.ranks} ranks but {args.topology} has {n} compute nodes; "
            "import it with the fabric it ran on"
        )
    if not meas.ranks:
        print(
            f"warning: {args.log} lists no '#  Rank' lines; cannot check it ran on {n} ranks",
            file=sys.stderr,
        )
    from pathlib import Path

    from solver.io.hdf5 import results as h5

    schedule = None
    sched_name = ""
    if Path(args.output).exists():
        stored_topo = h5.read_topology(args.output)
        if stored_topo != topo:
            raise ForestCollError(f"{args.output}: holds another fabric than {args.topology}")
        for name, s in h5.read_schedules(args.output).items():
            if s.collective == meas.collective and s.max_trees_per_root is None:
                from solver.algorithm.verify_stored import verify_stored

                verify_stored(s, args.output, name)  # its optimum becomes the bound stored here
                schedule, sched_name = s, name
                break
    if schedule is None:
        schedule = solve(topo, meas.collective)
        from solver.simulate.estimate import model_tables

        sched_name = h5.write_schedule(args.output, schedule, tables=model_tables)
    opt = float(schedule.optimal_algbw_exact)
    sizes = meas.size_bytes.astype(np.float64)
    bound_t = sizes / (opt * 1e9)
    nvswitch = any(nd.role == "nvswitch" for nd in topo.nodes)
    reason = above_bound_reason(meas.collective, meas.settings, nvswitch)
    above = [int(s) for s, a in zip(meas.size_bytes, meas.algbw_used) if a > opt]
    from solver.simulate.library import library_from_settings, library_spec, pick_library

    base, why = pick_library(topo)
    run_lib, used, left = library_from_settings(meas.settings, base)
    attrs = {
        "file": Path(args.log).name,
        "variant": meas.variant,
        "dropped_wrong_sizes": list(meas.wrong_sizes),
        "predicted": "bound: size / optimal algbw",
        "compare_on": "time and algbw (not busbw)",
        "settings": dict(meas.settings),
        "section": meas.section,
        "repeats": meas.repeats,
        "library": library_spec(run_lib),
    }
    if above:
        attrs["above_bound_sizes"] = above
        attrs["above_bound_reason"] = reason
    table = ResultTable(
        collective=meas.collective,
        algorithm=args.algorithm,
        source=meas.tool,
        size_bytes=meas.size_bytes,
        predicted_time=bound_t,
        predicted_algbw=np.full(len(sizes), opt),
        measured_time=meas.time_used,
        measured_algbw=meas.algbw_used,
        schedule=sched_name,
        attrs=attrs,
    )
    name = (
        args.name or f"measured_{meas.collective.replace('-', '_')}_{meas.tool.replace('-', '_')}"
    )
    h5.write_results(args.output, name, table)
    out = sys.stdout
    if len(meas.sections) > 1:
        out.write(f"{args.log} holds {len(meas.sections)} runs: " + "; ".join(meas.sections) + "\n")
    out.write(
        f"{meas.tool} {meas.collective}: {len(sizes)} sizes from {args.log}"
        + (f" ({meas.section})" if meas.section else "")
        + f" -> {args.output}:/results/{name}\n"
        f"using the {meas.variant} columns"
        + (f" ({meas.ranks} ranks)" if meas.ranks else "")
        + "\n"
    )
    if meas.settings:
        out.write("run settings: " + ", ".join(f"{k}={v}" for k, v in meas.settings.items()) + "\n")
    else:
        out.write("run settings: none shown in the log (run with NCCL_DEBUG=INFO to record them)\n")
    out.write(
        f"library for this run: --library {library_spec(run_lib)} ("
        + (f"{', '.join(used)} from the log; " if used else "no library setting in the log; ")
        + f"base {why})\n"
    )
    for item in left:
        out.write(f"  not expressed: {item}\n")
    if meas.repeats > 1:
        out.write(
            f"sizes printed up to {meas.repeats} times: the median-time row of each is kept\n"
        )
    if meas.wrong_sizes:
        out.write(
            f"dropped {len(meas.wrong_sizes)} row(s) with #wrong != 0: "
            + ", ".join(str(s) for s in meas.wrong_sizes)
            + "\n"
        )
    out.write(f"{'size':>12} {'time(us)':>10} {'algbw':>8} {'bound':>8} {'%bound':>7}\n")
    for s, t, a in zip(meas.size_bytes, meas.time_used, meas.algbw_used):
        mark = " *" if a > opt else ""
        out.write(
            f"{int(s):>12} {t * 1e6:>10.2f} {a:>8.2f} {opt:>8.2f} {100 * a / opt:>6.1f}%{mark}\n"
        )
    if above:
        out.write(f"* {len(above)} size(s) above the forward-only bound {opt:.2f} GB/s: {reason}\n")
    return 0
