"""``forestcoll check-plan``: execute MSCCL++ execution plans symbolically and check them."""

from __future__ import annotations

import argparse

from solver.cli._common import add_command
from solver.model.values import printable


def register(subparsers) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        "check-plan",
        "check MSCCL++ execution plans by executing them",
        "Check MSCCL++ execution plans (JSON, microsoft/mscclpp v0.10.0): the executor's reader\n"
        "rules (keys, types, names, ids, per-threadblock limits; src/core/executor/execution_plan.cc,\n"
        "each message citing its line), then run every rank's threadblocks on symbolic buffers:\n"
        "channels paired as the executor connects them, signal/wait and semaphores with\n"
        "happens-before, races, nops the kernel's threads need, per-call safety (ready before a put,\n"
        "every signal taken, port puts flushed), and the result of allgather, reducescatter or\n"
        "allreduce. A folder: every *.json file in it. Exit code 0 when all pass, 2 with a one-line\n"
        "error naming the file when not.",
        "forestcoll check-plan tests/data/real/mscclpp/allreduce.json",
    )
    parser.add_argument("plan", metavar="PLAN.json|FOLDER", help="plan file, or a folder of them")
    parser.add_argument(
        "--max-threadblocks",
        type=int,
        default=None,
        metavar="N",
        help="threadblocks per rank that can run at once, the GPU's SM/CU count (default 108, an A100)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    from solver.cli.deploy import folder_files
    from solver.mscclpp import MscclppError, check_plan_file

    if args.max_threadblocks is not None and args.max_threadblocks < 1:
        raise MscclppError(f"--max-threadblocks must be >= 1, got {args.max_threadblocks}")
    for path in folder_files(args.plan, ".json", "MSCCL++ plans"):
        report = check_plan_file(path, args.max_threadblocks)
        print(f"{printable(str(path))}: {report.summary()}")
    return 0
