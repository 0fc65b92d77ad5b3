"""Failure (N-1) studies on Dask local clusters: elements, orbits, wall time, rows per second.

For each fabric (default: 2x DGX A100, 16x DGX H100 rail, 64x MI250) runs the failure study
(links, switches, NICs; allgather) on a LocalCluster of 1 and of 2 worker processes and prints
a table. Wall time includes planning (base optimum, orbits) but not starting the cluster, which
is timed separately (first column). Every row of the 1- and 2-worker runs must agree. The
"calib" row times an embarrassingly parallel pure-Python loop (16 tasks) on the same clusters:
its speedup is what the machine offered at that moment (on a shared machine, often no second
core), to read the studies' speedups against.

    python benchmarks/studies.py [--fabrics a100x2,h100x16,mi250x64] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

FABRICS = {
    "a100x2": ("dgx_a100", 2),
    "h100x16": ("dgx_h100_rail", 16),
    "mi250x64": ("mi250", 64),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fabrics", default=",".join(FABRICS))
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--no-symmetry", dest="symmetry", action="store_false")
    args = ap.parse_args()

    from distributed import Client, LocalCluster

    from solver.io.templates import make
    from solver.studies import DaskEngine, failure_plan, run_study

    counts = [int(w) for w in args.workers.split(",")]
    _warm()  # the client plans (base optimum) too: compile its kernels before timing
    print(
        f"{'fabric':<18} {'GPUs':>5} {'elements':>8} {'orbits':>6} {'workers':>7} "
        f"{'start s':>7} {'plan s':>7} {'wall s':>8} {'rows/s':>8} {'speedup':>7}"
    )
    first = None
    for w in counts:
        cluster = LocalCluster(
            n_workers=w,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
        client.run(_warm)
        t0 = time.perf_counter()
        client.gather(client.map(_burn, [2_000_000] * 16, pure=False))
        wall = time.perf_counter() - t0
        client.close()
        cluster.close()
        first = first or wall
        print(
            f"{'calib (loop)':<18} {'':>5} {'':>8} {'':>6} {w:>7} {'':>7} {'':>7} {wall:>8.2f} "
            f"{16 / wall:>8.1f} {first / wall:>7.2f}",
            flush=True,
        )
    for name in args.fabrics.split(","):
        template, n = FABRICS[name]
        topo = make(template, n=n)
        first_wall = None
        reference = None
        for w in counts:
            t0 = time.perf_counter()
            cluster = LocalCluster(
                n_workers=w,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=logging.ERROR,
            )
            client = Client(cluster)
            client.run(_warm)  # compile (or load from cache) the kernels in every worker
            start = time.perf_counter() - t0
            try:
                t0 = time.perf_counter()
                plan = failure_plan(topo, ["links", "switches", "nics"], use_symmetry=args.symmetry)
                planned = time.perf_counter() - t0
                with DaskEngine(client=client) as engine:
                    result = run_study(plan, engine)
                wall = time.perf_counter() - t0
            finally:
                client.close()
                cluster.close()
            rows = {r["element"]: r["algbw_exact"] for r in result.rows}
            if reference is None:
                reference = rows
            elif rows != reference:
                raise SystemExit(f"{name}: rows differ between worker counts")
            first_wall = first_wall or wall
            print(
                f"{topo.name:<18} {len(topo.compute_ids):>5} {len(plan.keys):>8} "
                f"{len(plan.items):>6} {w:>7} {start:>7.1f} {planned:>7.2f} {wall:>8.2f} "
                f"{len(result.rows) / wall:>8.1f} {first_wall / wall:>7.2f}",
                flush=True,
            )


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def _warm() -> None:
    from solver.io.templates import ring
    from solver.studies.optimum import fabric_optimum

    fabric_optimum(ring(4, 10))


if __name__ == "__main__":
    main()
