"""Benchmark ``solver.solve`` on the reference fabrics and print a table.

Each fabric runs in fresh child processes so that memory and JIT compilation are measured per
fabric:

- cold:   first solve in a new process with an empty NUMBA_CACHE_DIR (includes JIT compilation);
- cached: first solve in a new process that finds the cache filled by the cold run;
- warm:   best of ``--repeat`` further solves in that second process (its phase times are shown);
- peak RSS: ``ru_maxrss`` of the cached process (Python + numba + the solve);
- verify: time of :func:`solver.algorithm.verify.verify_schedule` on the warm schedule (one
  process, or ``--workers`` forked processes for schedules of >= 1M tree edges);
- heights: tree heights in logical (compute-to-compute) hops, min..max (mean weighted by tree
  weight); tall trees cost latency on small messages;
- symmetry: the box translation the solver finds (fabrics of >= 256 compute nodes use it: one
  max-flow per orbit in the optimum, plans and box-0 trees after it);
- 2048xH100rail-cut (16 384 GPUs): optimum and bottleneck cut only; "verify" re-computes the
  cut's ratio from the fabric.

Usage::

    python benchmarks/solve.py                 # 1/2/4x DGX A100, 1/2/4x MI250, 16x DGX H100 rail
    python benchmarks/solve.py --large --only 128xH100rail --no-cold --repeat 1
    python benchmarks/solve.py --large         # also the issue-11 rows: 1024..4096 GPUs, 16K cut,
                                               # the 3-tier plans (SuperPOD 4096, Clos 32 768)
    python benchmarks/solve.py --large --only fattree1024 --workers 1   # one core's worth
    python benchmarks/solve.py --only 2xMI250 --collective allreduce --max-trees-per-root 8
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

# name -> (template function, positional args, keyword args, reference algbw GB/s, reference
# time s) from ALGORITHM.md
FABRICS = {
    "1xA100": ("dgx_a100", (1,), {}, "2400/7", 0.2),
    "2xA100": ("dgx_a100", (2,), {}, "1040/3", 10.9),
    "4xA100": ("dgx_a100", (4,), {}, "800/3", 88),
    "1xMI250": ("mi250", (1,), {}, "2400/7", 1.1),
    "2xMI250": ("mi250", (2,), {}, "5312/15", 73),
    "4xMI250": ("mi250", (4,), {}, "1024/3", 497),
    "16xH100rail": ("dgx_h100_rail", (16,), {}, None, None),
}
# the rows of issue 11's table (and one step toward them)
LARGE = {
    "64xH100rail": ("dgx_h100_rail", (64,), {}, None, None),
    "128xH100rail": ("dgx_h100_rail", (128,), {}, None, None),
    "64xMI250": ("mi250", (64,), {"ib_bw": 16}, None, None),
    "256xH100rail": ("dgx_h100_rail", (256,), {}, None, None),
    "fattree1024": ("fat_tree", (32, 16, 32), {"oversubscription": 2}, None, None),
    "fattree4096": ("fat_tree", (128, 16, 32), {"oversubscription": 2}, None, None),
    "2048xH100rail-cut": ("dgx_h100_rail", (2048,), {}, None, None),  # 16 384 GPUs
    # issue 23: GB200 NVL72 racks on a rail-optimised 2-tier IB network (MNNVL + IB)
    "16xNVL72": ("nvl72_racks", (16,), {}, None, None),  # 1152 GPUs
    # issue 23: 3-tier fabrics as compressed plans (odometer σ: racks / DGX nodes as boxes)
    "superpod4096-plan": ("superpod", (), {"sus": 16}, None, None),
    "clos3-32768-plan": ("clos3", (), {"zones": 8, "racks_per_zone": 256}, None, None),
}
CUT_ONLY = {"2048xH100rail-cut"}  # optimum and bottleneck cut only (no schedule)
PLAN = {"superpod4096-plan", "clos3-32768-plan"}  # compressed plan, verified compressed
PHASES = ("optimum", "switch_removal", "trees", "paths")


def child(args) -> None:
    """Run in a fresh process: solve, time it, print one JSON line."""
    from fractions import Fraction

    from solver import solve
    from solver.algorithm.verify import verify_schedule
    from solver.io import templates

    template, pos, kw, *_ = {**FABRICS, **LARGE}[args.child]
    topo = getattr(templates, template)(*pos, **kw)
    symmetry = _symmetry(topo)
    if args.child in CUT_ONLY:
        print(json.dumps(_cut_only(topo, symmetry)))
        return
    if args.child in PLAN:
        print(json.dumps(_plan(topo)))
        return
    options = {"collective": args.collective, "max_trees_per_root": args.max_trees_per_root}
    t0 = time.perf_counter()
    schedule = solve(topo, **options)
    first = time.perf_counter() - t0
    timings = dict(schedule.timings)
    if schedule.phases:  # allreduce: add up the phases
        timings = {p: sum(ph.timings.get(p, 0.0) for ph in schedule.phases) for p in PHASES}
    result = {
        "first": first,
        "warm": None,
        "phases": {p: timings.get(p) for p in PHASES},
        "verify": None,
        "N": len(topo.compute_ids),
        "k": schedule.k,
        "trees": len(schedule.all_trees()),
        "heights": _heights(schedule),
        "algbw": str(schedule.algbw_exact),
        "optimal": str(schedule.optimal_algbw_exact),
        "symmetry": symmetry,
    }
    if args.repeat:
        best = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            again = solve(topo, **options)
            elapsed = time.perf_counter() - t0
            if best is None or elapsed < best[0]:
                best = (elapsed, again)
        elapsed, again = best
        timings = dict(again.timings)
        if again.phases:  # allreduce: add up the phases
            timings = {p: sum(ph.timings.get(p, 0.0) for ph in again.phases) for p in PHASES}
        result["warm"] = elapsed
        result["phases"] = {p: timings.get(p) for p in PHASES}
        assert Fraction(result["algbw"]) == again.algbw_exact, "solve is not deterministic"
        schedule = again
    if args.repeat or args.verify_first:
        t0 = time.perf_counter()
        # forked verification only when asked for (--workers): on a loaded machine the
        # copy-on-write of a large schedule can cost more than the second process gains
        verify_schedule(schedule, workers=int(os.environ.get("FORESTCOLL_THREADS", "1")))
        result["verify"] = time.perf_counter() - t0
    result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def _symmetry(topo) -> str:
    """'B boxes' if the fabric has a box translation (what the solver finds), else '-'."""
    from solver.algorithm.pipeline import SYMMETRY_MIN_N
    from solver.algorithm.symmetry import box_symmetry

    sym = box_symmetry(topo, structural=False)
    if sym is None:
        return "-"
    used = len(topo.compute_ids) >= SYMMETRY_MIN_N
    return f"{sym.boxes} boxes" + ("" if used else " (unused)")


def _cut_only(topo, symmetry: str) -> dict:
    """Exact optimum and bottleneck cut, timed; the cut is re-checked from the fabric."""
    from fractions import Fraction

    from solver.algorithm.optimum import compute_optimum, cut_ratio
    from solver.algorithm.symmetry import box_symmetry
    from solver.flow.csr import IndexedFabric

    t0 = time.perf_counter()
    fabric = IndexedFabric.from_topology(topo)
    sym = box_symmetry(topo, fabric, structural=False)
    opt = compute_optimum(fabric, sinks=None if sym is None else sym.representatives(fabric))
    elapsed = time.perf_counter() - t0
    t0 = time.perf_counter()
    inside, out = cut_ratio(fabric, opt.cut)
    assert Fraction(out, fabric.scale) / inside * fabric.num_compute == opt.algbw
    return {
        "first": elapsed,
        "warm": elapsed,
        "verify": time.perf_counter() - t0,
        "phases": {"optimum": elapsed},
        "N": fabric.num_compute,
        "k": opt.k,
        "trees": 0,
        "heights": "- (cut only)",
        "algbw": str(opt.algbw),
        "optimal": str(opt.algbw),
        "symmetry": symmetry,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _plan(topo) -> dict:
    """A compressed plan (:func:`solver.algorithm.compressed.solve_compressed`), timed and
    verified without expanding it."""
    from solver.algorithm.compressed import solve_compressed
    from solver.algorithm.verify_plan import verify_compressed

    t0 = time.perf_counter()
    plan = solve_compressed(topo)
    elapsed = time.perf_counter() - t0
    t0 = time.perf_counter()
    verify_compressed(plan)
    reps = plan.representatives
    return {
        "first": elapsed,
        "warm": elapsed,
        "verify": time.perf_counter() - t0,
        "phases": {p: plan.base.timings.get(p) for p in PHASES},
        "N": len(topo.compute_ids),
        "k": plan.base.k,
        "trees": plan.num_trees,
        "heights": f"{min(t.height for t in reps)}..{max(t.height for t in reps)} (plan)",
        "algbw": str(plan.algbw_exact),
        "optimal": str(plan.base.optimal_algbw_exact),
        "symmetry": f"{plan.order} boxes (odometer)",
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _heights(schedule) -> str:
    """Tree heights in logical hops: 'min..max (mean weighted by tree weight)'."""
    pairs = [(t.height, t.weight) for _, t in schedule.all_trees()]
    low, high = min(h for h, _ in pairs), max(h for h, _ in pairs)
    mean = sum(h * w for h, w in pairs) / sum(w for _, w in pairs)
    return f"{low}..{high} ({float(mean):.1f})"


def run_child(name: str, args, cache_dir: str, repeat: int) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=str(ROOT))
    if getattr(args, "workers", None):
        env["FORESTCOLL_THREADS"] = str(args.workers)
    cmd = [
        sys.executable,
        __file__,
        "--child",
        name,
        "--collective",
        args.collective,
        "--repeat",
        str(repeat),
    ] + (["--verify-first"] if repeat == 0 else [])
    if args.max_trees_per_root is not None:
        cmd += ["--max-trees-per-root", str(args.max_trees_per_root)]
    try:
        proc = subprocess.run(
            cmd,
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=args.timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"no result within {args.timeout:.0f} s"}
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        return {"error": last}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fmt(value, digits: int = 3) -> str:
    if value is None:
        return "-"
    if value < 0.01:
        return f"{value * 1000:.2g} ms"
    return f"{value:.{digits}g} s"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--large",
        action="store_true",
        help="add the issue-11 rows: 1024/2048 H100 rail, 1024 MI250, 4096 fat tree, 16K cut",
    )
    parser.add_argument("--only", help="comma-separated fabric names")
    parser.add_argument("--collective", default="allgather")
    parser.add_argument("--max-trees-per-root", type=int, default=None)
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="warm solves per fabric (0: only the first solve, with its phases)",
    )
    parser.add_argument("--no-cold", action="store_true", help="skip the empty-cache run")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per child")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="threads for independent max-flows (FORESTCOLL_THREADS; default: the usable "
        "CPUs) and processes for verify (default 1)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--verify-first", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0

    fabrics = dict(FABRICS, **(LARGE if args.large else {}))
    if args.only:
        names = args.only.split(",")
        unknown = [n for n in names if n not in {**FABRICS, **LARGE}]
        if unknown:
            parser.error(
                f"unknown fabric {unknown[0]} (choose from {', '.join({**FABRICS, **LARGE})})"
            )
        fabrics = {n: {**FABRICS, **LARGE}[n] for n in names}

    print(
        f"collective {args.collective}, max_trees_per_root {args.max_trees_per_root}, "
        f"python {sys.version.split()[0]}, {os.cpu_count()} cpus"
    )
    header = (
        "| fabric | N | symmetry | k | trees | heights | algbw GB/s | ref algbw | optimum | switch_removal | "
        "trees | paths | warm total | cached 1st | cold 1st | ref time | verify | "
        "peak RSS |"
    )
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    from fractions import Fraction

    for name, (_tpl, _pos, _kw, ref_algbw, ref_time) in fabrics.items():
        with tempfile.TemporaryDirectory(prefix="fc-numba-cache-") as cache:
            cold = None
            if not args.no_cold:
                cold = run_child(name, args, cache, repeat=0)
                if "error" in cold:
                    print(f"| {name} | error: {cold['error']} |")
                    continue
            warm = run_child(name, args, cache, repeat=args.repeat)
        if "error" in warm:
            print(f"| {name} | error: {warm['error']} |")
            continue
        ph = warm["phases"]
        ref = "-"
        if ref_algbw and args.collective == "allgather" and args.max_trees_per_root is None:
            ref = (
                "ok"
                if Fraction(warm["optimal"]) == Fraction(ref_algbw)
                else f"MISMATCH {float(Fraction(ref_algbw)):.6g}"
            )
        print(
            f"| {name} | {warm['N']} | {warm['symmetry']} | {warm['k']} | {warm['trees']} | "
            f"{warm['heights']} | "
            f"{float(Fraction(warm['algbw'])):.6g} | {ref} | "
            + " | ".join(fmt(ph.get(p)) for p in PHASES)
            + f" | {fmt(warm['warm'])} | {fmt(warm['first'])} | "
            f"{fmt(cold['first']) if cold else '-'} | {fmt(ref_time)} | "
            f"{fmt(warm['verify'])} | {warm['rss_mb']:.0f} MB |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
