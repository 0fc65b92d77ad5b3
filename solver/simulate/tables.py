"""A sweep as ``/results`` tables of the HDF5 results file (:func:`result_tables`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from solver.model.results import ResultTable
from solver.simulate import library as _library
from solver.simulate.rows import LIBRARY, Sweep, SweepRow


def result_tables(sw: Sweep, schedule_name: str = "") -> dict[str, ResultTable]:
    """``/results`` tables: ``sim_<collective>_<algorithm>`` per algorithm (source simulator).

    The ``nccl`` table's attrs also name the library, its pick at each size (``choice``) and the
    in-switch reduction note (:meth:`Sweep.in_switch_note`), so a results file shows what
    ``simulate`` printed.
    """
    tables: dict[str, ResultTable] = {}
    for name in dict.fromkeys(r.algorithm for r in sw.rows):
        rows = sw.table(name)
        size = np.array([r.size for r in rows], np.int64)
        t = np.array([r.time for r in rows], np.float64)
        tables[f"sim_{sw.collective.replace('-', '_')}_{name}"] = ResultTable(
            collective=sw.collective,
            algorithm=name,
            source="simulator",
            size_bytes=size,
            predicted_time=t,
            predicted_algbw=size / t / 1e9,
            measured_time=ResultTable.empty_measured(len(rows)),
            measured_algbw=ResultTable.empty_measured(len(rows)),
            schedule=schedule_name if name == "forestcoll" else "",
            attrs={
                "chunk_bytes": sw.chunk,
                "min_chunks": sw.min_chunks,
                "default_latency_us": sw.latency_us,
                "bound_time_s": _json_floats(r.bound_time for r in rows),
                "estimate_time_s": _json_floats(r.estimate_time for r in rows),
                "route_bound_time_s": _json_floats(r.route_bound_time for r in rows),
                "model": "chunk-level discrete events; see solver/simulate/engine.py",
                **(_library_attrs(sw, rows) if name == LIBRARY else {}),
            },
        )
    return tables


def _json_floats(values: Iterable[float]) -> list[float | None]:
    """Floats for a table's JSON attrs: NaN (unknown, e.g. the library's route bound) as null,
    which the results file reads back (it refuses NaN)."""
    return [None if math.isnan(v) else float(v) for v in values]


def _library_attrs(sw: Sweep, rows: list[SweepRow]) -> dict[str, Any]:
    """What the ``nccl`` table adds: the library, its pick per size, and the in-switch note."""
    lib = sw.library or _library.library_for(sw.topology)
    return {
        "model": "the library tuner's own model; see solver/simulate/library.py",
        "library": lib.name,
        "generation": lib.generation,
        "spec": _library.library_spec(lib),
        "choice": [r.choice for r in rows],
        "in_switch_note": sw.in_switch_note(),
    }
