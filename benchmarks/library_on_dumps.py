"""The engineer's comparison on every real dump: which library, the library model against the
forward-only optimum, and ForestColl simulated at the same efficiency.

For each file in ``tests/data/real/topo`` (with ``import_options.json``) and one collective:
the library the hardware names and why; the forward-only optimum (line rate); the library
model's algbw at 1 GiB (its pick, ``capped`` when the tuner's own figure was above the optimum
and cut to it); ForestColl's schedule simulated at 1 GiB on links derated to that library's
efficiency (what MSCCL would get); and the ratio. Prints a markdown table.

Usage::

    python benchmarks/library_on_dumps.py                  # allreduce
    python benchmarks/library_on_dumps.py -c allgather --only rccl_topo_8p
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import solver
from solver.simulate import LIBRARY, sweep
from solver.simulate.library import pick_library

TOPO = Path(__file__).resolve().parents[1] / "tests" / "data" / "real" / "topo"
GIB = 1 << 30


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-c", "--collective", default="allreduce")
    ap.add_argument("--only", default="", help="substring of the file names to run")
    args = ap.parse_args()
    options = json.loads((TOPO / "import_options.json").read_text())
    print(
        "| dump | GPUs | library (why) | bound GB/s | library model at 1 GiB | ForestColl at 1 GiB, same efficiency | FC / model |"
    )
    print("|---|---:|---|---:|---|---:|---:|")
    for path in sorted(TOPO.glob("*.xml")):
        if args.only not in path.name:
            continue
        topo = solver.load_topology(path, **options.get(path.name, {}))
        lib, why = pick_library(topo)
        schedule = solver.solve(topo, collective=args.collective)
        sw = sweep(
            topo, args.collective, ["forestcoll", LIBRARY], [GIB], schedule=schedule, library=lib
        )
        (model,) = sw.table(LIBRARY)
        (fc,) = sw.table("forestcoll")
        capped = any("capped" in note for note in sw.notes.get(LIBRARY, ()))
        pick = model.choice + (", capped" if capped else "")
        print(
            f"| {path.name} | {len(topo.compute_ids)} | {lib.label} ({why}) | "
            f"{float(schedule.optimal_algbw_exact):.1f} | {model.algbw:.1f} ({pick}) | "
            f"{fc.algbw:.1f} | {fc.algbw / model.algbw:.2f}x |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
