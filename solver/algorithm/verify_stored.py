"""Checking a schedule or compressed plan read from a file before anything uses it.

A results file is input like any other: its trees, loads, cut and optimum may have been edited
by hand or forged while staying well formed (every index in range, every fraction readable).
Every consumer of a stored schedule or plan (``forestcoll export``, ``simulate RESULTS.h5``,
``show``, the designer, ``study --resume``) calls :func:`verify_stored` on what it is about to
use, so a lie ends as one line naming the file, the item and the rule it breaks, never as a
simulated figure, an XML file or a drawing.

The checks are those of :func:`solver.algorithm.verify.verify_schedule` (full schedules) and
:func:`solver.algorithm.verify_plan.verify_compressed` (plans, without expanding them), against
the fabric stored in the same file.
"""

from __future__ import annotations

import os

from solver.algorithm.verify import verify_schedule
from solver.algorithm.verify_plan import verify_compressed
from solver.model.errors import SolverError
from solver.model.plan import CompressedSchedule
from solver.model.schedule import Schedule

__all__ = ["verify_stored"]


def verify_stored(item: Schedule | CompressedSchedule, source: str | os.PathLike,
                  name: str) -> None:
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
        else:
            verify_schedule(item)
    except SolverError as exc:
        raise SolverError(f"{source}: {kind} {name!r} failed verification: {exc}") from None
