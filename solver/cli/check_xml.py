"""``forestcoll check-xml``: execute an MSCCL XML symbolically and check its collective."""

from __future__ import annotations

import argparse

from solver.cli._common import add_command


def register(subparsers) -> argparse.ArgumentParser:
    from solver.msccl import RUNTIMES

    parser = add_command(
        subparsers,
        "check-xml",
        "check an MSCCL XML algorithm by executing it",
        "Check an MSCCL XML algorithm file: the rules of the runtime's parser (attributes, peers,\n"
        "channels, steps per threadblock, cnt < 72, dependencies...), then run it on symbolic\n"
        "buffers (threadblocks in order, sends and receives matched FIFO per sender, receiver and\n"
        "channel, dependencies honoured) in every mode it declares (in-place, out-of-place), and\n"
        "verify the final buffers implement the collective. A deadlock names the ranks and steps\n"
        "involved. Exit code 0 when it passes, 2 with a one-line error when not.",
        "forestcoll check-xml algos/allreduce.xml --runtime rccl",
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
        default=1,
        metavar="N",
        help="messages a connection buffers before a send waits (default 1: strict)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    from solver.msccl import MscclError, check_file

    if args.fifo_capacity < 1:
        raise MscclError(f"--fifo-capacity must be >= 1, got {args.fifo_capacity}")
    report = check_file(args.xml, args.runtime, args.fifo_capacity)
    print(f"{args.xml}: {report.summary()}")
    return 0
