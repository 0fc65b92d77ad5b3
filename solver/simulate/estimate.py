"""The one alpha-beta performance model of a schedule (used by ``simulate``, the HDF5 results
written with a schedule, and the designer's plot).

``time(M) = sum over phases of max over links (bytes on the link / bandwidth)``  (the bound of
this schedule's own routes: ``M / algbw``) ``+ fill``, where the fill of a phase is the deepest
root-to-leaf path of its trees, each logical edge costing its hops' latencies (link latency, or
:data:`~solver.simulate.routes.DEFAULT_LATENCY_US`) plus one chunk over its slowest hop; chunks as
the simulator cuts them (``DEFAULT_CHUNK``, at least ``DEFAULT_MIN_CHUNKS`` slices of >= 4 KiB).
This is :func:`solver.simulate.routes.alpha_estimate_time`; the chunk-level simulator refines it.
"""

from __future__ import annotations

import numpy as np

from solver.model.results import ResultTable
from solver.model.schedule import Schedule
from solver.simulate.engine import DEFAULT_MIN_CHUNKS
from solver.simulate.routes import DEFAULT_LATENCY_US, LinkTable, alpha_estimate_time, from_schedule

#: Chunk size of the estimate and of ``simulate`` by default (bytes).
DEFAULT_CHUNK = 256 * 1024
#: Sizes of the tables written with a schedule: 1 KiB .. 4 GiB.
MODEL_SIZES = tuple(2**p for p in range(10, 33))


def estimate_times(
    schedule: Schedule,
    sizes,
    chunk: float = DEFAULT_CHUNK,
    latency_us: float = DEFAULT_LATENCY_US,
    min_chunks: int = DEFAULT_MIN_CHUNKS,
) -> np.ndarray:
    """Estimated seconds of ``schedule`` at every size in ``sizes`` (bytes)."""
    rs = from_schedule(schedule)
    table = LinkTable.of(schedule.topology, latency_us)
    return np.array(
        [alpha_estimate_time(rs, float(m), chunk, table, min_chunks) for m in sizes], np.float64
    )


def model_tables(schedule: Schedule, name: str) -> dict[str, ResultTable]:
    """``<name>.bound`` (M / optimal algbw) and ``<name>.estimate`` (the model above)."""
    sizes = np.array(MODEL_SIZES, dtype=np.int64)
    nan = ResultTable.empty_measured(len(sizes))
    bound_time = sizes / (float(schedule.optimal_algbw_exact) * 1e9)
    est_time = estimate_times(schedule, sizes)
    common = {
        "collective": schedule.collective,
        "algorithm": "forestcoll",
        "source": "model",
        "schedule": name,
    }
    return {
        f"{name}.bound": ResultTable(
            size_bytes=sizes,
            predicted_time=bound_time,
            predicted_algbw=sizes / bound_time / 1e9,
            measured_time=nan,
            measured_algbw=nan.copy(),
            attrs={"model": "bound", "formula": "M / optimal_algbw"},
            **common,
        ),
        f"{name}.estimate": ResultTable(
            size_bytes=sizes,
            predicted_time=est_time,
            predicted_algbw=sizes / est_time / 1e9,
            measured_time=nan.copy(),
            measured_algbw=nan.copy(),
            attrs={
                "model": "alpha-beta",
                "formula": "link-load bound per phase + deepest tree path fill (latency + chunk)",
                "chunk_bytes": DEFAULT_CHUNK,
                "min_chunks": DEFAULT_MIN_CHUNKS,
                "default_hop_latency_us": DEFAULT_LATENCY_US,
            },
            **common,
        ),
    }
