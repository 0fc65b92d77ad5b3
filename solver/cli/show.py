"""``forestcoll show``: summarise a results file (fabric, schedules, plans, result tables)."""

from __future__ import annotations

import argparse
import time

from solver.model.errors import ForestCollError, SolverError
from solver.cli._common import add_command


def register(subparsers) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        "show",
        "summarise a results file (.h5)",
        "Summarise an HDF5 results file: its schema version and creator, the fabric, every stored\n"
        "schedule (collective, k, algbw and the exact optimum, number of trees), every compressed\n"
        "plan and every result table (source, algorithm, sizes, how many rows are measured).\n"
        "--trees NAME lists the trees of one schedule (root, multiplicity, weight, height, edges);\n"
        "for a compressed plan, its representative trees. --verify re-checks every stored\n"
        "schedule and plan with the independent verifier (a plan without expanding it).",
        "forestcoll show results.h5 --trees allgather_k1 --verify",
    )
    parser.add_argument("results", metavar="RESULTS.h5", help="results file")
    parser.add_argument("--trees", metavar="NAME", help="also list the trees of this schedule")
    parser.add_argument("--verify", action="store_true",
                        help="verify every stored schedule and compressed plan")
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    from solver.io.plans_h5 import read_plans
    from solver.io.results_h5 import read_schedules, summarize

    print(summarize(args.results))
    if args.trees or args.verify:
        schedules = read_schedules(args.results)
        plans = read_plans(args.results)
    if args.trees:
        if args.trees in schedules:
            _print_trees(args.trees, schedules[args.trees])
        elif args.trees in plans:
            plan = plans[args.trees]
            print(f"representative trees of plan {args.trees} (the other "
                  f"{plan.num_trees - len(plan.representatives)} trees are their images under "
                  f"the generator's powers 1..{plan.order - 1}):")
            _print_trees(args.trees, plan.base, header=False)
        else:
            names = [*schedules, *plans]
            raise ForestCollError(
                f"{args.results}: no schedule {args.trees!r} (it has: {', '.join(names) or 'none'})"
            )
    if args.verify:
        _verify_all(schedules, plans)
    return 0


def _print_trees(name: str, s, header: bool = True) -> None:
    if header:
        print(f"trees of {name}:")
    for phase, t in s.all_trees():
        edges = " ".join(f"{e.src}->{e.dst}" for e in t.edges)
        label = f"[{phase}] " if s.phases else ""
        print(f"  {label}root {t.root} x{t.multiplicity} weight {t.weight} height {t.height}: {edges}")


def _verify_all(schedules: dict, plans: dict) -> None:
    from solver.algorithm.verify import verify_schedule
    from solver.algorithm.verify_plan import verify_compressed

    for kind, items, check in (("schedule", schedules, verify_schedule),
                               ("plan", plans, verify_compressed)):
        for name, item in items.items():
            t0 = time.perf_counter()
            try:
                check(item)
            except SolverError as exc:
                raise SolverError(f"{kind} {name!r} failed verification: {exc}") from None
            print(f"verified: {kind} {name} ({time.perf_counter() - t0:.3g} s)")
