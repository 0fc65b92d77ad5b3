"""Published cluster templates at a user's sizes: build time, then ``forestcoll solve`` end to end.

For each case: the template is built in this process (``make``, timed: the up-front size check
and the fabric), written as a v1 file, and solved by the installed ``forestcoll solve FILE`` in a
new process (numba's cache warmed by one small untimed solve first), reporting wall time and
the child's peak RSS, or the one-line refusal (exit 2) and after how long, or that it ran out
of the time allowed. A template ``make`` refuses (its size limits) is shown as refused at build;
a solve refused because the full schedule is too large is run again with ``--compressed``.
The machine is shared: compare rows as ratios within one run.

Usage::

    python benchmarks/clusters.py                 # every case, 300 s per solve
    python benchmarks/clusters.py --timeout 60    # a shorter budget per solve
    python benchmarks/clusters.py --only nvl72_racks hpn
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from solver.io.formats import save
from solver.io.templates import make
from solver.model.errors import TopologyError

CASES: list[tuple[str, dict]] = [
    ("nvl72_racks", {"racks": 2}),
    ("nvl72_racks", {"racks": 8}),
    ("nvl72_racks", {"racks": 16}),
    ("hpn", {"segments": 1, "hosts": 16}),
    ("hpn", {"segments": 2, "hosts": 64}),
    ("hpn", {"segments": 15}),
    ("hpn", {"segments": 15, "pods": 2}),
    ("clos3", {"zones": 1, "racks_per_zone": 16}),
    ("clos3", {"zones": 2, "racks_per_zone": 32}),
    ("clos3", {"zones": 8, "racks_per_zone": 192}),
    ("superpod", {"sus": 1}),
    ("superpod", {"sus": 4}),
    ("superpod", {"sus": 8}),
]


def forestcoll() -> list[str]:
    exe = shutil.which("forestcoll")
    return [exe] if exe else [sys.executable, "-m", "solver.cli"]


def solve(path: Path, timeout: float, *options: str) -> tuple[str, float, int | None]:
    """(outcome, wall seconds, peak RSS MB) of ``forestcoll solve [options] path``."""
    with open(os.devnull, "w") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            forestcoll() + ["solve", *options, str(path)], stdout=out, stderr=err, text=True
        )
        deadline = t0 + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                return f"not done after {timeout:.0f} s (stopped)", timeout, usage.ru_maxrss // 1024
            time.sleep(0.05)
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = [line for line in err.read().splitlines() if line.strip()]
    if code == 0:
        return "solved", wall, usage.ru_maxrss // 1024
    return f"exit {code}: {lines[-1] if lines else ''}", wall, usage.ru_maxrss // 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per solve")
    ap.add_argument("--only", nargs="+", metavar="TEMPLATE", help="only these templates")
    args = ap.parse_args()
    cases = [c for c in CASES if not args.only or c[0] in args.only]
    print(
        "| template | params | GPUs | links | build s | `forestcoll solve` s | peak RSS MB "
        "| outcome |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        warm = folder / "warm.json"
        save(make("dgx_h100_rail", n=2), warm)
        solve(warm, args.timeout)  # fills numba's cache: not timed
        for name, params in cases:
            label = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
            t0 = time.perf_counter()
            try:
                topo = make(name, **params)
            except TopologyError as exc:
                print(
                    f"| {name} | {label} | | | {time.perf_counter() - t0:.2f} | | "
                    f"| refused at build: {exc} |",
                    flush=True,
                )
                continue
            build = time.perf_counter() - t0
            path = folder / f"{name}.json"
            save(topo, path)
            outcome, wall, rss = solve(path, args.timeout)
            print(
                f"| {name} | {label} | {len(topo.compute_ids)} | {len(topo.links)} "
                f"| {build:.2f} | {wall:.1f} | {rss} | {outcome} |",
                flush=True,
            )
            if "--compressed" in outcome:  # the refusal names the compressed plan: run it
                outcome, wall, rss = solve(path, args.timeout, "--compressed")
                print(
                    f"| {name} | {label}, `--compressed` | {len(topo.compute_ids)} "
                    f"| {len(topo.links)} | | {wall:.1f} | {rss} | {outcome} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
