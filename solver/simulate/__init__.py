"""Chunk-level network simulation of collective schedules and baselines.

- :mod:`.routes`: route sets (flows over trees) built from a ForestColl :class:`Schedule` or a
  baseline; link-load bound and alpha-aware estimate.
- :mod:`.engine`: the discrete-event simulator (model in its docstring).
- :mod:`.baselines`: NCCL-style rings, double binary tree, direct, Blink-style trees.
- :mod:`.library`: what NCCL/RCCL would run (their tuner's model): the ``nccl`` baseline.
- :mod:`.calibration`: real logs, their fabrics, and the library model's error on them.
- :mod:`.nccl_tests`: importers of nccl-tests / rccl-tests logs.
- :mod:`.sizes` (message sizes), :mod:`.rows` (:class:`SweepRow`, :class:`Sweep`),
  :mod:`.sweeps` (:func:`sweep` runs several algorithms over a range of sizes) and
  :mod:`.tables` (:func:`result_tables`: the rows as ResultTable objects for HDF5).
"""

from solver.model.units import format_size
from solver.simulate.engine import DEFAULT_MIN_CHUNKS, SimRun, simulate_routes
from solver.simulate.estimate import DEFAULT_CHUNK
from solver.simulate.routes import DEFAULT_LATENCY_US, RouteSet, from_schedule
from solver.simulate.rows import ALGORITHMS, LIBRARY, NVLS, Sweep, SweepRow, busbw_factor
from solver.simulate.sizes import DEFAULT_SIZES, parse_size, parse_sizes
from solver.simulate.sweeps import forward_only_bound, route_sets, sweep, warm_up
from solver.simulate.tables import result_tables

__all__ = [
    "ALGORITHMS",
    "DEFAULT_CHUNK",
    "DEFAULT_MIN_CHUNKS",
    "DEFAULT_LATENCY_US",
    "DEFAULT_SIZES",
    "LIBRARY",
    "NVLS",
    "RouteSet",
    "SimRun",
    "Sweep",
    "SweepRow",
    "busbw_factor",
    "format_size",
    "forward_only_bound",
    "from_schedule",
    "parse_size",
    "parse_sizes",
    "result_tables",
    "route_sets",
    "simulate_routes",
    "sweep",
    "warm_up",
]
