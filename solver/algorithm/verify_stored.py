"""Checking a schedule or compressed plan read from a file before anything uses it.

A results file is input like any other: its trees, loads, cut and optimum may have been edited
by hand or forged while staying well formed (every index in range, every fraction readable).
Every consumer of a stored schedule or plan (``forestcoll export``, ``simulate RESULTS.h5``,
``show``, the designer, ``study --resume``) calls :func:`verify_stored` on what it is about to
use, so a lie ends as one line naming the file, the item and the rule it breaks, never as a
simulated figure, an XML file or a drawing.

The checks are those of :func:`solver.algorithm.verify.verify_schedule` (full schedules) and
:func:`solver.algorithm.verify_plan.verify_compressed` (plans, without expanding them), against
the fabric stored in the same file, plus the optimum. The verifier proves that the trees reach
``algbw`` and that the stored cut is a real cut whose bound is ``optimal_algbw``; a real cut's
bound is never below the true optimum, so when ``algbw == optimal_algbw`` the claim is proven.
Otherwise (a schedule with ``--max-trees-per-root``, or a forged optimum backed by a real but
not minimal cut, e.g. one GPU's egress) the optimum is computed again by max-flow
(:func:`solver.algorithm.optimum.compute_optimum`, started from the stored cut, so one round
of max-flows when the claim is true) and must be equal.
"""

from __future__ import annotations

import os

from solver.algorithm.optimum import compute_optimum
from solver.algorithm.verify import verify_schedule
from solver.algorithm.verify_plan import verify_compressed
from solver.flow.csr import IndexedFabric
from solver.model.errors import SolverError
from solver.model.plan import CompressedSchedule
from solver.model.schedule import Schedule

__all__ = ["verify_stored"]


def verify_stored(
    item: Schedule | CompressedSchedule, source: str | os.PathLike, name: str
) -> None:
    """Verify ``item`` (stored as ``name`` in ``source``) against its fabric.

    Raises
    ------
    SolverError
        ``"SOURCE: schedule 'NAME' failed verification: <the verifier's message>"``.
    """
    kind = "plan" if isinstance(item, CompressedSchedule) else "schedule"
    try:
        if isinstance(item, CompressedSchedule):
            verify_compressed(item)
            _check_optimum(item.base)
        else:
            verify_schedule(item)
            for part in item.phases or (item,):
                _check_optimum(part)
    except SolverError as exc:
        raise SolverError(f"{source}: {kind} {name!r} failed verification: {exc}") from None


def _check_optimum(s: Schedule) -> None:
    """``optimal_algbw_exact`` is the fabric's optimum (``s`` already verified, not allreduce)."""
    if s.algbw_exact == s.optimal_algbw_exact:
        return  # reached by the trees and the bound of a real cut: nothing lies between
    # reduce-scatter is the allgather of the reversed fabric (its cut: links entering S)
    topo = s.topology if s.collective == "allgather" else s.topology.reversed()
    fabric = IndexedFabric.from_topology(topo)
    inside = set(s.bottleneck.nodes)
    start = [[name in inside for name in fabric.names]]
    optimum = compute_optimum(fabric, start=start).algbw
    if optimum != s.optimal_algbw_exact:
        raise SolverError(
            f"{s.collective}: optimal_algbw {float(s.optimal_algbw_exact):.6g} GB/s is not the "
            f"fabric's optimum {float(optimum):.6g} GB/s (max-flow); its cut is not a bottleneck"
        )
