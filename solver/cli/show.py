"""``forestcoll show``: summarise a results file (fabric, schedules, plans, result tables),
every schedule and plan verified against the stored fabric before anything is printed."""

from __future__ import annotations

import argparse
import time

from solver.cli._common import add_command
from solver.model.errors import ForestCollError
from solver.model.values import printable


def register(subparsers) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        "show",
        "summarise a results file (.h5)",
        "Summarise an HDF5 results file: its schema version and creator, the fabric, every stored\n"
        "schedule (collective, k, algbw and the exact optimum, number of trees), every compressed\n"
        "plan and every result table (source, algorithm, sizes, how many rows are measured).\n"
        "--trees NAME lists the trees of one schedule (root, multiplicity, weight, height, edges);\n"
        "for a compressed plan, its representative trees. Every stored schedule and plan is\n"
        "checked with the independent verifier against the stored fabric before anything is\n"
        "printed (a plan without expanding it); a file that fails is refused. --verify also\n"
        "prints how long each check took. Text from the file is printed escaped.",
        "forestcoll show results.h5 --trees allgather_k1 --verify",
    )
    parser.add_argument("results", metavar="RESULTS.h5", help="results file")
    parser.add_argument("--trees", metavar="NAME", help="also list the trees of this schedule")
    parser.add_argument(
        "--verify",
        action="store_true",
        help="print the verification time of every schedule and plan",
    )
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    from solver.io.hdf5.plans import read_plans
    from solver.io.hdf5.results import read_schedules, summarize

    schedules = read_schedules(args.results)
    plans = read_plans(args.results)
    if args.trees and args.trees not in schedules and args.trees not in plans:
        names = [*schedules, *plans]
        raise ForestCollError(
            f"{args.results}: no schedule {args.trees!r} (it has: {', '.join(names) or 'none'})"
        )
    timings = _verify_all(args.results, schedules, plans)  # before anything from it is printed
    print(summarize(args.results))
    if args.trees in schedules:
        _print_trees(args.trees, schedules[args.trees])
    elif args.trees:
        plan = plans[args.trees]
        print(
            f"representative trees of plan {printable(args.trees)} (the other "
            f"{plan.num_trees - len(plan.representatives)} trees are their images under "
            f"the generator's powers 1..{plan.order - 1}):"
        )
        _print_trees(args.trees, plan.base, header=False)
    if args.verify:
        for line in timings:
            print(line)
    return 0


def _print_trees(name: str, s, header: bool = True) -> None:
    if header:
        print(f"trees of {printable(name)}:")
    for phase, t in s.all_trees():
        edges = " ".join(f"{e.src}->{e.dst}" for e in t.edges)
        label = f"[{phase}] " if s.phases else ""
        print(
            f"  {label}root {t.root} x{t.multiplicity} weight {t.weight} height {t.height}: {edges}"
        )


def _verify_all(source, schedules: dict, plans: dict) -> list[str]:
    """Verify every schedule and plan (SolverError naming the first that fails); one line of
    timing per item."""
    from solver.algorithm.verify_stored import verify_stored

    lines = []
    for kind, items in (("schedule", schedules), ("plan", plans)):
        for name, item in items.items():
            t0 = time.perf_counter()
            verify_stored(item, source, name)
            lines.append(f"verified: {kind} {printable(name)} ({time.perf_counter() - t0:.3g} s)")
    return lines
