"""What verifying a stored result costs every consumer (issue 21): a table per fabric size.

For B× DGX H100 rail boxes (8B GPUs) a compressed plan is solved and stored, and its expansion
(the full schedule: N·k trees of N-1 edges) is stored as a schedule in a second file. Then,
as ``export``/``simulate``/``show``/the designer do: read it back (``read_plans`` /
``read_schedules``), and verify it (:func:`solver.algorithm.verify_stored.verify_stored`).
"optimum max-flow" is the extra check a schedule whose algbw is below its stored optimum gets
(a ``--max-trees-per-root`` schedule): :func:`compute_optimum` started from the stored cut.

    python benchmarks/verify_stored.py             # 64, 256 and 1024 GPUs
    python benchmarks/verify_stored.py --boxes 16
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def _timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def row(boxes: int, folder: Path) -> dict:
    from solver.algorithm.compressed import solve_compressed
    from solver.algorithm.optimum import compute_optimum
    from solver.algorithm.verify_stored import verify_stored
    from solver.flow.csr import IndexedFabric
    from solver.io.hdf5.plans import read_plans, write_plan
    from solver.io.hdf5.results import read_schedules, write_schedule
    from solver.io.templates import dgx_h100_rail

    topo = dgx_h100_rail(boxes)
    plan = solve_compressed(topo)
    plan_file, full_file = folder / f"plan{boxes}.h5", folder / f"full{boxes}.h5"
    write_plan(plan_file, plan)
    write_schedule(full_file, plan.expand())
    plans, read_plan_s = _timed(lambda: read_plans(plan_file))
    _, verify_plan_s = _timed(lambda: verify_stored(plans["allgather"], plan_file, "allgather"))
    schedules, read_full_s = _timed(lambda: read_schedules(full_file))
    ((name, schedule),) = schedules.items()
    _, verify_full_s = _timed(lambda: verify_stored(schedule, full_file, name))
    fabric = IndexedFabric.from_topology(topo)
    inside = set(schedule.bottleneck.nodes)
    _, flow_s = _timed(lambda: compute_optimum(fabric, start=[[v in inside for v in fabric.names]]))
    edges = sum(len(t.edges) for t in schedule.trees)
    return {
        "gpus": len(topo.compute_ids),
        "trees": len(schedule.trees),
        "edges": edges,
        "file MB": full_file.stat().st_size / 2**20,
        "read plan": read_plan_s,
        "verify plan": verify_plan_s,
        "read schedule": read_full_s,
        "verify schedule": verify_full_s,
        "optimum max-flow": flow_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boxes", type=int, nargs="+", default=[8, 32, 128])
    args = parser.parse_args()
    columns = [
        "gpus",
        "trees",
        "edges",
        "file MB",
        "read plan",
        "verify plan",
        "read schedule",
        "verify schedule",
        "optimum max-flow",
    ]
    print(" | ".join(columns) + "   (times in s)")
    with tempfile.TemporaryDirectory() as tmp:
        for boxes in args.boxes:
            r = row(boxes, Path(tmp))
            print(
                " | ".join(
                    f"{r[c]:.3g}" if isinstance(r[c], float) else str(r[c]) for c in columns
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
