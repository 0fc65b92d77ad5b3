"""Simulator speed and results: ForestColl vs baselines on template fabrics.

Usage: python benchmarks/simulate.py [--collective allgather] [--chunk 256K] [--fabrics 2xmi250,...]

Prints one row per (fabric, algorithm): flows (distinct trees), simulated algbw at 1 GiB and its
ratio to the optimum, the wall time to simulate 1 GiB and 4 GiB, and a whole 1K:4G sweep (23
sizes), with the JIT already compiled (a warm-up run happens first). Then the ForestColl/ring ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver import solve  # noqa: E402
from solver.io import templates as T  # noqa: E402
from solver.simulate import parse_size, parse_sizes, route_sets  # noqa: E402
from solver.simulate.engine import prepare, simulate_prepared  # noqa: E402

FABRICS = {
    "1xmi250": lambda: T.mi250(1),
    "2xmi250": lambda: T.mi250(2),
    "2xa100": lambda: T.dgx_a100(2),
    "4xa100": lambda: T.dgx_a100(4),
    "2xh100": lambda: T.dgx_h100_rail(2),
    "4xmi250": lambda: T.mi250(4),
}
ALGOS = ["forestcoll", "ring", "ring1", "tree", "direct", "blink"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collective", default="allgather")
    ap.add_argument("--chunk", default="256K")
    ap.add_argument("--fabrics", default="1xmi250,2xmi250,2xa100,4xa100,2xh100")
    args = ap.parse_args()
    chunk = parse_size(args.chunk)
    sweep_sizes = parse_sizes("1K:4G")
    # warm-up (JIT compile or cache load)
    warm = T.ring(4)
    rs, _ = route_sets(warm, "allgather", ["ring"])
    simulate_prepared(prepare(rs["ring"]), 1 << 20, 1 << 18)

    print(f"collective {args.collective}, chunk {args.chunk}, default hop latency 1 us")
    head = (
        f"{'fabric':<10} {'algorithm':<10} {'flows':>6} {'algbw@1G':>9} {'%opt':>6} "
        f"{'sim 1G (s)':>10} {'events 1G':>10} {'sim 4G (s)':>10} {'sweep (s)':>9}"
    )
    print(head)
    print("-" * len(head))
    ratios = {}
    for key in args.fabrics.split(","):
        topo = FABRICS[key]()
        t0 = time.perf_counter()
        sched = solve(topo, args.collective)
        t_solve = time.perf_counter() - t0
        opt = sched.optimal_algbw
        built, skipped = route_sets(topo, args.collective, ALGOS, sched)
        res = {}
        for name, rset in built.items():
            prep = prepare(rset)
            r1 = simulate_prepared(prep, 1 << 30, chunk)
            t0 = time.perf_counter()
            r1 = simulate_prepared(prep, 1 << 30, chunk)
            t1 = time.perf_counter() - t0
            t0 = time.perf_counter()
            simulate_prepared(prep, 4 << 30, chunk)
            t4 = time.perf_counter() - t0
            t0 = time.perf_counter()
            for s in sweep_sizes:
                simulate_prepared(prep, s, chunk)
            tsw = time.perf_counter() - t0
            res[name] = r1.algbw
            print(
                f"{key:<10} {name:<10} {len(rset.flows):>6} {r1.algbw:>9.2f} "
                f"{100 * r1.algbw / opt:>5.1f}% {t1:>10.3f} {r1.events:>10} {t4:>10.3f} {tsw:>9.3f}"
            )
        for name, why in skipped.items():
            print(f"{key:<10} {name:<10} {'-':>6} ({why})")
        print(
            f"{key:<10} optimum {opt:.3f} GB/s, k={sched.k}, {len(sched.all_trees())} trees, "
            f"solve {t_solve:.2f} s"
        )
        if "ring" in res:
            ratios[key] = (
                res["forestcoll"] / res["ring"],
                res["forestcoll"] / res.get("ring1", float("nan")),
            )
    print()
    for key, (r, r1) in ratios.items():
        print(
            f"ForestColl / multi-channel ring at 1 GiB on {key}: {r:.2f}x  (vs single ring {r1:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
