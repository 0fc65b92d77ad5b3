"""What the designer runs in a :class:`~fc_gui.controllers.background.BackgroundTask` to solve:
one solve of the open fabric (with its display data), and the start-up JIT warm-up."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from fc_gui.controllers.background import TaskFn, print_traceback
from fc_gui.model.trees import tree_rows, trees_using_links
from fc_gui.views.plots_dock import model_tables
from solver.model.schedule import Schedule
from solver.model.topology import COMPUTE, SWITCH, Link, Node, Topology

#: ``solve_fn(topology=..., collective=..., max_trees_per_root=..., progress=..., cancel=...)``
SolveFn = Callable[..., Any]


def default_solve(*args, **kwargs):
    """``solver.solve`` (imported when first called)."""
    import solver

    return solver.solve(*args, **kwargs)


@dataclass(frozen=True)
class SolveOutcome:
    """A finished solve: the schedule, its display data (None if preparing it failed), and the
    wall seconds of the solve call and of preparing the display data."""

    schedule: Schedule
    prepared: dict | None
    solve_s: float
    prepare_s: float


def prepare_display(schedule: Schedule) -> dict:
    """Derived display data, computed in the worker thread so showing a result stays quick
    (the allreduce figures of marked switches come after, from their own background task:
    :meth:`~fc_gui.controllers.results.ResultsController.compute_switch_bounds`)."""
    return {
        "tree_rows": tree_rows(schedule),
        "link_users": trees_using_links(schedule),
        "model_tables": model_tables(schedule),
    }


def solve_job(
    solve_fn: SolveFn, request: dict[str, Any], prepare: Callable[[Schedule], dict]
) -> TaskFn:
    """The task callable solving ``request`` (``topology``, ``collective``,
    ``max_trees_per_root``) with ``solve_fn``, then computing ``prepare(schedule)`` in the
    worker thread too (skipped once cancelled); it returns a :class:`SolveOutcome`."""

    def run(progress, cancel) -> SolveOutcome:
        t0 = time.perf_counter()
        schedule = solve_fn(progress=progress, cancel=cancel, **request)
        t1 = time.perf_counter()
        prepared = None
        if not cancel.is_set():
            try:  # display data computed here, off the GUI thread
                prepared = prepare(schedule)
            except Exception:
                print_traceback()
        return SolveOutcome(schedule, prepared, t1 - t0, time.perf_counter() - t1)

    return run


def warmup_topology() -> Topology:
    """A tiny fabric that exercises every solver phase (a switch to remove, trees to pack)."""
    gpus = [Node(f"g{i}", COMPUTE, role="gpu") for i in range(3)]
    nodes = (*gpus, Node("sw", SWITCH, role="nvswitch"))
    links = (
        Link("g0", "sw", Fraction(2)),
        Link("g1", "sw", Fraction(2)),
        Link("g2", "sw", Fraction(1)),
        Link("g0", "g1", Fraction(1)),
    )
    return Topology("jit-warmup", nodes, links)


def warmup_job(solve_fn: SolveFn) -> TaskFn:
    """The task callable compiling the solver's numba kernels by solving
    :func:`warmup_topology` (both phase orders, and with a tree limit); it returns its seconds.
    Compiling cannot be interrupted: run it in a daemon task."""

    def run(progress, cancel) -> float:
        t0 = time.perf_counter()
        for collective in ("allgather", "reduce-scatter"):
            solve_fn(topology=warmup_topology(), collective=collective)
        solve_fn(topology=warmup_topology(), collective="allgather", max_trees_per_root=1)
        return time.perf_counter() - t0

    return run
