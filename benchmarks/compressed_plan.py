"""Compressed plans (issue 11): solve, verify, write and read back a plan per fabric; print a table.

Each fabric (``rail:B`` = B× DGX H100 rail, 8B GPUs; ``fat:L`` = fat tree of L leaves × 32 GPUs,
L/8 spines, 2:1 oversubscribed) runs in a fresh child process, so "peak RSS" is that of
one plan: ``solve_compressed`` (optimum, orbit-level switch plans, box-0 trees, routes, loads
from orbit sums), ``verify_compressed`` (no expansion), ``write_plan`` to a new results file,
``read_plans`` and a second verification of what was read. "full schedule" is what the expansion
would hold: N·k trees of N-1 edges.

    python benchmarks/compressed_plan.py       # rail 256/2048/16 384 GPUs, fat tree 4096/16 384
    python benchmarks/compressed_plan.py --fabrics rail:32,fat:128
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _fabric(spec: str):
    from solver.io.templates import dgx_h100_rail, fat_tree

    kind, _, count = spec.partition(":")
    n = int(count)
    if kind == "rail":
        return dgx_h100_rail(n)
    if kind == "fat":
        return fat_tree(n, max(2, n // 8), 32, oversubscription=2)
    raise SystemExit(f"error: unknown fabric {spec!r} (rail:BOXES or fat:LEAVES)")


def child(spec: str, out: str) -> None:
    from solver.algorithm.compressed import solve_compressed
    from solver.algorithm.verify_plan import verify_compressed
    from solver.io.hdf5.plans import read_plans, write_plan

    topo = _fabric(spec)
    t0 = time.perf_counter()
    plan = solve_compressed(topo)
    solve_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    verify_compressed(plan)
    verify_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    write_plan(out, plan)
    write_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    back = read_plans(out)["allgather"]
    verify_compressed(back)
    reread_s = time.perf_counter() - t0
    n = len(topo.compute_ids)
    heights = [t.height for t in plan.representatives]
    print(
        json.dumps(
            {
                "name": topo.name,
                "N": n,
                "k": plan.k,
                "reps": len(plan.representatives),
                "order": plan.order,
                "algbw": str(plan.algbw_exact),
                "heights": f"{min(heights)}..{max(heights)}",
                "phases": {k: round(v, 2) for k, v in plan.base.timings.items()},
                "solve": solve_s,
                "verify": verify_s,
                "write": write_s,
                "reread": reread_s,
                "bytes": os.path.getsize(out),
                "full_edges": n * plan.k * (n - 1),
                "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--fabrics",
        default="rail:32,rail:256,rail:2048,fat:128,fat:512",
        help="comma-separated rail:BOXES / fat:LEAVES",
    )
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.out)
        return 0
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} at the start"
    )
    print(
        "| fabric | GPUs | k | trees stored / expanded | heights | optimum | switch plans | "
        "trees | routes + loads | solve | verify | write | read + verify | file | full schedule "
        "(tree edges) | peak RSS |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for spec in args.fabrics.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "plan.h5")
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            try:
                proc = subprocess.run(
                    [sys.executable, __file__, "--child", spec, "--out", out],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=args.timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                print(f"| {spec} | | no result within {args.timeout:.0f} s |")
                continue
        if proc.returncode:
            last = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"| {spec} | | error: {last} |")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        ph = r["phases"]
        print(
            f"| {r['name']} | {r['N']} | {r['k']} | {r['reps']} / {r['reps'] * r['order']} "
            f"| {r['heights']} | {ph.get('optimum', 0):.1f} s | {ph.get('switch_removal', 0):.1f} s "
            f"| {ph.get('trees', 0):.1f} s | {ph.get('paths', 0):.1f} s | {r['solve']:.1f} s "
            f"| {r['verify']:.1f} s | {r['write']:.1f} s | {r['reread']:.1f} s "
            f"| {r['bytes'] / 2**20:.1f} MB | {r['full_edges']:.3g} | {r['rss_mb']:.0f} MB |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
