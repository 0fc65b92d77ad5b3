"""Network simulation of collective schedules and baselines; :func:`sweep` (``sweeps``) runs
several algorithms over a range of sizes. Modules: ``routes`` (flows over trees), ``engine`` (the
chunk-level event simulator), ``flowlevel``, ``estimate`` (the alpha-beta model), ``baselines``,
``library`` (the NCCL/RCCL tuner model), ``calibration`` (its error on real logs), ``nccl_tests``
(log importers), ``sizes``, ``rows`` (:class:`SweepRow`, :class:`Sweep`) and ``tables``."""

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
