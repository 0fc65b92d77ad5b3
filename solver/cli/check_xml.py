"""``forestcoll check-xml``: execute an MSCCL XML symbolically and check its collective."""

from __future__ import annotations

import argparse
import sys

from solver.cli._common import add_command


def register(subparsers) -> argparse.ArgumentParser:
    from solver.msccl import RUNTIMES

    parser = add_command(
        subparsers,
        "check-xml",
        "check an MSCCL XML algorithm by executing it",
        "Check an MSCCL XML algorithm file: the checks of the runtime's own loader, one rule per\n"
        "check of its source, each message citing file:line (attributes, peers, channels, steps,\n"
        "cnt < 72, dependencies, XML element limits...); then lower each threadblock as the loader\n"
        "does (nops carry dependencies, consecutive reductions fuse), run it on symbolic buffers\n"
        "in every mode it declares (in-place, out-of-place) and verify the result: allreduce,\n"
        "allgather, reducescatter, alltoall, broadcast, reduce, gather and scatter (send, recv and\n"
        "alltoallv are executed but their sizes are only known at run time). A deadlock names the\n"
        "ranks and steps waiting on each other; a wrong result the step that wrote it. Warnings\n"
        "(the runtime loads the file but never picks it, or refuses it at launch) go to stderr.\n"
        "Exit code 0 when it passes, 2 with a one-line error when not.",
        "forestcoll check-xml tests/data/msccl_ok_ring_allgather.xml --runtime rccl",
    )
    parser.add_argument("xml", metavar="ALGO.xml", help="MSCCL XML algorithm file")
    parser.add_argument(
        "--runtime",
        choices=tuple(RUNTIMES),
        default="msccl-executor",
        help="whose parser rules to apply (default: msccl-executor)",
    )
    parser.add_argument(
        "--fifo-capacity",
        type=int,
        default=None,
        metavar="N",
        help="chunks a connection buffers before a send waits (default: the runtime's, 2 for "
        "Simple and 8 for LL/LL128)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    from solver.msccl import MscclError, check_file

    if args.fifo_capacity is not None and args.fifo_capacity < 1:
        raise MscclError(f"--fifo-capacity must be >= 1, got {args.fifo_capacity}")
    report = check_file(args.xml, args.runtime, args.fifo_capacity)
    for note in report.notes:
        print(f"warning: {note}", file=sys.stderr)
    print(f"{args.xml}: {report.summary()}")
    return 0
