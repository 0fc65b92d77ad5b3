"""``forestcoll check-xml``: execute an MSCCL XML symbolically and check its collective."""

from __future__ import annotations

import argparse
import sys

from solver.cli._common import add_command
from solver.model.values import printable


def register(subparsers) -> argparse.ArgumentParser:
    from solver.msccl import RUNTIMES

    parser = add_command(
        subparsers,
        "check-xml",
        "check an MSCCL XML algorithm by executing it",
        "Check an MSCCL XML algorithm file: read as the runtime's own XML reader reads it (no\n"
        "references, CDATA, text, single quotes, spaces around '=' or newlines inside tags; at most\n"
        "16 attribute tokens; msccl_parser.cc:18-214, each refusal naming its rule and line), then\n"
        "the checks of the runtime's own loader, one rule per check of its source, each message\n"
        "citing file:line (attributes, peers, channels, steps, cnt < 72, dependencies, XML element\n"
        "limits...); then lower each threadblock as the loader does (nops carry dependencies,\n"
        "consecutive reductions fuse, cnt chunks stream as kernel calls), run it on symbolic buffers\n"
        "in every mode it declares (in-place, out-of-place) and verify the result: allreduce,\n"
        "allgather, reducescatter, alltoall, broadcast, reduce, gather and scatter (send, recv and\n"
        "alltoallv are executed but their sizes are only known at run time). A deadlock names the\n"
        "ranks and steps waiting on each other; a wrong result the step that wrote it. Warnings\n"
        "(the runtime loads the file but never picks it, or refuses it at launch) go to stderr.\n"
        "Exit code 0 when it passes, 2 with a one-line error when not.",
        "forestcoll check-xml tests/data/msccl_ok_ring_allgather.xml --runtime rccl",
    )
    parser.add_argument(
        "xml",
        metavar="ALGO.xml|FOLDER",
        help="MSCCL XML algorithm file, or a folder (MSCCL_ALGO_DIR): every file in it",
    )
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
        help="kernel calls a connection buffers before a send waits (default: the runtime's, 2 "
        "for Simple and 8 for LL/LL128); a step of cnt chunks is streamed as cnt calls at large "
        "sizes (fewer when the file's maxBytes is small)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    from solver.msccl import MscclError, check_file, runtime_named

    runtime = runtime_named(args.runtime)
    if args.fifo_capacity is not None and args.fifo_capacity < 1:
        raise MscclError(f"--fifo-capacity must be >= 1, got {args.fifo_capacity}")
    from solver.cli.deploy import folder_files

    for path in folder_files(args.xml, ".xml", "MSCCL XML algorithms"):
        report = check_file(path, runtime, args.fifo_capacity)
        for note in report.notes:
            print(f"warning: {printable(str(path))}: {note}", file=sys.stderr)
        print(f"{printable(str(path))}: {report.summary()}")
    return 0
