"""Simulator speed and results: ForestColl vs baselines on template fabrics.

Usage: python benchmarks/simulate.py [--collective allgather] [--chunk 256K] [--fabrics 2xmi250,...]
                                     [--scale 16,64,256,512,1024] [--skip-speed] [--errors-only]

1. Speed table: one row per (fabric, algorithm): flows (distinct trees), simulated algbw at 1 GiB
   and its ratio to the optimum, the wall time to simulate 1 GiB and 4 GiB, and a whole 1K:4G
   sweep (23 sizes), with the JIT already compiled (a warm-up run happens first). Then the
   ForestColl/ring ratio. (Line rate: no library efficiency.)
2. Calibration table: every real log of solver.simulate.calibration: measured algbw, the library
   model's, the error, held out or not, at 1 GiB and at the largest size, the error range at
   1-64 MiB; the --library value of each log (channel caps, TCPX); worst errors; the TCPX step
   cost re-solved and the two efficiencies refitted on the calibration logs.
2b. Error table (alone with --errors-only): per log, calibration or held out, the worst |error|
   at >= 1 GiB and over 1-64 MiB (signed, with the size), then the worst of each set; the
   per-call cost across boxes re-fitted on the NCCL calibration logs.
3. Scale table (--scale, GPU counts of n x DGX H100 rail): solve time; simulation of the ForestColl
   schedule at 1 GiB with the default model (chunk-level while it fits, else flow-level): wall
   time, events, algbw vs optimum; the flow-level model's time and algbw (cross-check); the
   library's choice and algbw; the time to build the ring baseline's routes (routing + rings).
4. NVLS table: every quoted NVLS allreduce figure of solver.simulate.calibration.NVLS_FIGURES,
   measured vs model and the error (one calibrates, the rest held out); then the three allreduce
   bounds of solver.algorithm.capability_bounds on 1x/2x DGX H100 rail and the NVL72-like rack.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver import solve  # noqa: E402
from solver.io import templates as T  # noqa: E402
from solver.model.units import format_size  # noqa: E402
from solver.simulate import calibration as C  # noqa: E402
from solver.simulate import library as L  # noqa: E402
from solver.simulate import parse_size, parse_sizes, route_sets, sweep  # noqa: E402
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
    ap.add_argument("--scale", default="", help="GPU counts for the scale table, e.g. 16,64,256")
    ap.add_argument("--skip-speed", action="store_true", help="skip the speed table")
    ap.add_argument("--errors-only", action="store_true", help="print only the error table")
    args = ap.parse_args()
    if args.errors_only:
        error_table()
        return 0
    if not args.skip_speed:
        speed_table(args)
    calibration_table()
    error_table()
    nvls_table()
    if args.scale:
        scale_table([int(x) for x in args.scale.split(",")], args.collective)
    return 0


def calibration_table() -> None:
    print()
    print("Library model vs real logs (algbw GB/s; error = model / measured - 1)")
    head = (
        f"{'log':<40} {'coll':<9} {'set':<11} {'size':>5} {'meas':>7} {'model':>7} {'err':>7} "
        f"{'size':>5} {'meas':>7} {'model':>7} {'err':>7} {'choice':<12} {'err 1-64M':>14}"
    )
    print(head)
    print("-" * len(head))
    for log in C.LOGS:
        pts = C.compare([log], 1 << 20)
        first = next(p for p in pts if p.size >= 1 << 30)
        last = pts[-1]
        mid = [p.error for p in pts if p.size <= 64 << 20]
        mid_text = f"{100 * min(mid):>+6.0f}..{100 * max(mid):>+4.0f}%" if mid else f"{'-':>14}"
        print(
            f"{log.file:<40} {log.measurement().collective:<9} "
            f"{'held out' if log.held_out else 'calibration':<11} {format_size(first.size):>5} "
            f"{first.measured:>7.1f} {first.predicted:>7.1f} {100 * first.error:>+6.1f}% "
            f"{format_size(last.size):>5} {last.measured:>7.1f} {last.predicted:>7.1f} "
            f"{100 * last.error:>+6.1f}% {last.choice:<12} {mid_text}"
        )
    print()
    print(
        "Library settings per log (--library value; held-out logs keep the settings their run shows)"
    )
    for log in C.LOGS:
        print(f"  {log.file:<52} {L.library_spec(L.library_for(log.topology()))}")
    print()
    print(
        "ForestColl vs the library on the logs' fabrics (GB/s algbw; ForestColl simulated on links"
    )
    print("derated like the library's; measured = the log)")
    head = (
        f"{'fabric':<58} {'coll':<9} {'size':>5} {'measured':>8} {'nccl model':>10} "
        f"{'ForestColl':>10} {'FC bound':>8} {'FC/nccl':>7}"
    )
    print(head)
    print("-" * len(head))
    for log in C.LOGS:
        m = log.measurement()
        topo = log.topology()
        sched = solve(topo, m.collective)
        big = [int(x) for x in m.size_bytes if x >= 1 << 30]
        sizes = sorted({big[0], big[-1]})
        sw = sweep(
            topo,
            m.collective,
            ["forestcoll", "nccl"],
            sizes,
            schedule=sched,
            library=L.library_for(topo),
        )
        for size in sizes:
            fc = next(r for r in sw.table("forestcoll") if r.size == size)
            nc = next(r for r in sw.table("nccl") if r.size == size)
            meas = float(m.algbw_used[list(m.size_bytes).index(size)])
            print(
                f"{log.fabric[:58]:<58} {m.collective:<9} {format_size(size):>5} {meas:>8.1f} "
                f"{nc.algbw:>10.1f} {fc.algbw:>10.1f} {sched.optimal_algbw:>8.1f} "
                f"{fc.algbw / nc.algbw:>6.2f}x"
            )
        note = sw.in_switch_note()
        if note:
            print(f"  note: {note}")
    for held, label in ((False, "calibration"), (True, "held out")):
        logs = [g for g in C.LOGS if g.held_out == held]
        print(
            f"worst |error| at >= 1 GiB, {label} logs: {100 * C.worst_error(C.compare(logs)):.1f}%"
        )
    print(
        f"TCPX step cost {L.TCPX_STEP_US} us (solved on the TCPX calibration log at 1 GiB: "
        f"{C.fit_tcpx_step():.2f} us)"
    )
    net, xgmi, worst = C.fit(41)
    print(
        f"constants: network efficiency {L.NET_EFFICIENCY}, xGMI efficiency {L.XGMI_EFFICIENCY} "
        f"(refit on the calibration logs: net {net:.2f}, xGMI {xgmi:.2f}, minimax {100 * worst:.1f}%)"
    )


def _worst(points) -> str:
    """``+12.5 % @1G``: the point of largest |error|, signed, with its size; '-' for none."""
    if not points:
        return "-"
    p = max(points, key=lambda q: abs(q.error))
    return f"{100 * p.error:+.1f} % @{format_size(p.size)}"


def error_table() -> None:
    print()
    print("Worst |error| per log (model / measured - 1; the size where it is)")
    head = f"{'log':<52} {'set':<11} {'>= 1 GiB':>16} {'1-64 MiB':>16}  choice at 1 GiB"
    print(head)
    print("-" * len(head))
    sets: dict[str, tuple[list, list]] = {"calibration": ([], []), "held out": ([], [])}
    for held in (False, True):
        label = "held out" if held else "calibration"
        for log in (g for g in C.LOGS if g.held_out == held):
            pts = C.compare([log], 1 << 20)
            big = [p for p in pts if p.size >= 1 << 30]
            small = [p for p in pts if p.size <= 64 << 20]
            sets[label][0].extend(big)
            sets[label][1].extend(small)
            print(
                f"{log.file:<52} {label:<11} {_worst(big):>16} {_worst(small):>16}  "
                f"{big[0].choice if big else '-'}"
            )
    print()
    for label, (big, small) in sets.items():
        within = sum(
            1
            for g in C.LOGS
            if g.held_out == (label == "held out")
            and round(100 * C.worst_error(C.compare([g])), 1) <= 8.0
        )
        n = sum(1 for g in C.LOGS if g.held_out == (label == "held out"))
        print(
            f"{label:<11}: worst >= 1 GiB {_worst(big)} ({within} of {n} logs within 8.0 %), "
            f"worst 1-64 MiB {_worst(small)}"
        )
    cost, worst = C.fit_call_cost()
    print(
        f"per-call cost across boxes {L.CALL_COST_US} us (re-fitted on "
        f"{len(C.call_cost_logs())} NCCL calibration logs: {cost:.1f} us, worst 1-64 MiB "
        f"{100 * worst:.1f} %)"
    )


def scale_table(gpus: list[int], collective: str) -> None:
    print()
    print(f"Scale: n x DGX H100 rail, {collective} at 1 GiB (ForestColl at line rate)")
    head = (
        f"{'GPUs':>5} {'solve (s)':>9} {'model':>5} {'sim (s)':>8} {'events':>9} {'algbw':>7} "
        f"{'%opt':>6} {'flow (s)':>8} {'flow algbw':>10} {'nccl choice':<16} {'nccl algbw':>10} "
        f"{'ring routes (s)':>15}"
    )
    print(head)
    print("-" * len(head))
    for g in gpus:
        topo = T.dgx_h100_rail(max(1, g // 8))
        t0 = time.perf_counter()
        sched = solve(topo, collective)
        t_solve = time.perf_counter() - t0
        t0 = time.perf_counter()
        sw = sweep(topo, collective, ["forestcoll", "nccl"], [1 << 30], schedule=sched)
        t_sim = time.perf_counter() - t0
        fc, nc = sw.table("forestcoll")[0], sw.table("nccl")[0]
        t0 = time.perf_counter()
        fl = sweep(topo, collective, ["forestcoll"], [1 << 30], schedule=sched, model="flow").rows[
            0
        ]
        t_flow = time.perf_counter() - t0
        t0 = time.perf_counter()
        route_sets(topo, collective, ["ring"])  # routing + ring placement (the baselines' start)
        t_ring = time.perf_counter() - t0
        print(
            f"{g:>5} {t_solve:>9.1f} {fc.model:>5} {t_sim:>8.2f} {fc.events:>9} "
            f"{fc.algbw:>7.1f} {100 * fc.algbw / sched.optimal_algbw:>5.1f}% {t_flow:>8.2f} "
            f"{fl.algbw:>10.1f} {nc.choice:<16} {nc.algbw:>10.1f} {t_ring:>15.2f}",
            flush=True,
        )


def speed_table(args) -> None:
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


def nvls_table() -> None:
    from solver.algorithm.capability_bounds import capability_bounds

    print()
    print("NVLS allreduce vs public figures (algbw GB/s; error = model / measured - 1)")
    head = f"{'fabric':<40} {'set':<11} {'size':>5} {'meas':>7} {'model':>7} {'err':>7}  source"
    print(head)
    print("-" * len(head))
    errors = []
    for fig, predicted, _ in C.nvls_compare():
        err = predicted / fig.measured - 1
        if fig.held_out:
            errors.append(abs(err))
        print(
            f"{fig.fabric[:40]:<40} {'held out' if fig.held_out else 'calibration':<11} "
            f"{format_size(fig.size):>5} {fig.measured:>7.1f} {predicted:>7.1f} "
            f"{100 * err:>+6.1f}%  {fig.source[:60]}"
        )
    print(
        f"worst |error|, held-out NVLS figures: {100 * max(errors):.1f}% "
        f"({sum(e <= 0.02 for e in errors)} of {len(errors)} within 2 %)"
    )
    print()
    print("Allreduce bounds (GB/s, line rate): forward-only / any-schedule / capability")
    for topo in (T.dgx_h100_rail(1), T.dgx_h100_rail(2), T.make("nvl72")):
        b = capability_bounds(topo, "allreduce")
        print(
            f"{topo.name:<24} {float(b.forward_only):>8.2f} {float(b.any_schedule):>8.2f} "
            f"{float(b.capability):>8.2f} {'exact' if b.exact else 'constructed'}"
        )


if __name__ == "__main__":
    sys.exit(main())
