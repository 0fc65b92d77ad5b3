"""MSCCL++ plan export and check-plan speed and size.

Usage: python benchmarks/mscclpp.py [--fabrics 2xa100,2xmi250,2xh100] [--rail-boxes 16] [--k 1]

One row per (fabric, collective): the schedule (``--k`` trees per root, solved once, not timed),
the plan's size (MB of JSON), threadblocks per rank, ops in all, the time to build the plan
document, to check it (parse the text, reader rules, symbolic execution, result) and the
process's peak RSS so far. A fabric whose plan cannot be written prints the one-line refusal.
Then the two Simple plans MSCCL++ ships (tests/data/real/mscclpp/).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver import solve  # noqa: E402
from solver.io import templates as T  # noqa: E402
from solver.mscclpp import MscclppError, build_plan, check_plan_file, check_plan_text, plan_text  # noqa: E402

FABRICS = {
    "2xa100": lambda: T.dgx_a100(2),
    "2xmi250": lambda: T.mi250(2),
    "2xh100": lambda: T.dgx_h100_rail(2),
}
COLLECTIVES = ("allgather", "reduce-scatter", "allreduce")


def rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def row(label: str, topo, coll: str, k) -> None:
    s = solve(topo, collective=coll, max_trees_per_root=k)
    try:
        t = time.perf_counter()
        doc = build_plan(s)
        build = time.perf_counter() - t
        text = plan_text(doc)
        t = time.perf_counter()
        report = check_plan_text(text)
        check = time.perf_counter() - t
    except MscclppError as exc:
        print(f"| {label} | {coll} | {s.k} | refused: {exc} |")
        return
    st = report.stats
    print(
        f"| {label} | {coll} | {s.k} | {st['ranks']} | {len(text) / 1e6:.2f} | {st['max_threadblocks']} | "
        f"{st['max_ops']} | {st['ops']} | {build:.2f} | {check:.2f} | {rss_gb():.2f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--fabrics", default=",".join(FABRICS))
    ap.add_argument(
        "--rail-boxes", default="", help="e.g. 16: DGX H100 rail fabrics of that many boxes"
    )
    ap.add_argument("--k", type=int, default=1, help="--max-trees-per-root (0: no limit)")
    args = ap.parse_args()
    k = args.k or None
    print(
        "| fabric | collective | k | ranks | plan MB | tbs/rank | ops/tb max | ops | build s | check s | peak RSS GB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in [f for f in args.fabrics.split(",") if f]:
        topo = FABRICS[name]()
        for coll in COLLECTIVES:
            row(name, topo, coll, k)
    for boxes in [int(b) for b in args.rail_boxes.split(",") if b]:
        topo = T.dgx_h100_rail(boxes)
        for coll in COLLECTIVES:
            row(f"{boxes}xh100", topo, coll, k)
    print()
    print("| shipped plan | ranks | ops | check s |")
    print("|---|---|---|---|")
    for f in ("allreduce.json", "reduce.json"):
        t = time.perf_counter()
        r = check_plan_file(ROOT / "tests" / "data" / "real" / "mscclpp" / f)
        print(f"| {f} | {r.ranks} | {r.ops_executed} | {time.perf_counter() - t:.3f} |")


if __name__ == "__main__":
    main()
