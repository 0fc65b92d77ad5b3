"""MSCCL++ execution plans of ForestColl schedules, and a checker that executes them symbolically.

- :func:`build_plan` (``solver.mscclpp.generate``): Schedule -> plan document (JSON) for the
  executor of microsoft/mscclpp v0.10.0, with the export's :class:`PlanOptions`
  (``solver.mscclpp.options``);
- :func:`check_plan` / :func:`check_plan_file` (``solver.mscclpp.interpreter``): the reader's
  rules (``solver.mscclpp.plan``) + symbolic execution + result check.

Every plan this package writes has passed the checker first.
"""

from __future__ import annotations

import json
import os

from solver.io.files import atomic_write_text
from solver.model.schedule import Schedule
from solver.mscclpp.generate import build_plan, rank_order
from solver.mscclpp.interpreter import PlanReport, check_plan, check_plan_file, check_plan_text
from solver.mscclpp.options import CHANNEL_CHOICES, DEFAULT_PLAN_OPTIONS, PlanOptions
from solver.mscclpp.plan import (
    COMMIT,
    RELEASE,
    MscclppError,
    parse_plan,
    plan_stats,
    size_granularity,
)


def plan_text(doc: dict) -> str:
    """The JSON text of a plan (indented as the DSL's ``to_json`` writes it)."""
    return json.dumps(doc, indent=2) + "\n"


def export_plan(
    schedule: Schedule, options: PlanOptions = DEFAULT_PLAN_OPTIONS
) -> tuple[str, PlanReport]:
    """The plan text of ``schedule``, checked by executing it, and its check report.

    Parameters
    ----------
    schedule : Schedule
        An allgather, reduce-scatter or allreduce schedule (``solver.solve``'s result).
    options : PlanOptions
        Rank order, instances, channels, message-size range, name, resident threadblocks.

    Returns
    -------
    text : str
        The plan's JSON text (:func:`plan_text`).
    report : PlanReport
        What the symbolic execution found (ranks, threadblocks, operations).

    Raises
    ------
    MscclppError
        When the plan cannot be built for the executor (:func:`build_plan`) or fails its check.

    Examples
    --------
    >>> from solver import solve
    >>> from solver.io.templates import ring
    >>> from solver.mscclpp import PlanOptions, export_plan
    >>> text, report = export_plan(solve(ring(4)), PlanOptions(instances=2))
    >>> '"num_threads_per_block"' in text
    True
    """
    doc = build_plan(schedule, options)
    text = plan_text(doc)
    report = check_plan_text(text, "generated plan", options.resident)
    return text, report


def write_plan(
    path: str | os.PathLike, schedule: Schedule, options: PlanOptions = DEFAULT_PLAN_OPTIONS
) -> PlanReport:
    """Export (:func:`export_plan`), check, then write ``path`` atomically; returns the check report."""
    text, report = export_plan(schedule, options)
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise MscclppError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return report


__all__ = [
    "CHANNEL_CHOICES",
    "COMMIT",
    "DEFAULT_PLAN_OPTIONS",
    "RELEASE",
    "MscclppError",
    "PlanOptions",
    "PlanReport",
    "build_plan",
    "check_plan",
    "check_plan_file",
    "check_plan_text",
    "export_plan",
    "parse_plan",
    "plan_stats",
    "plan_text",
    "rank_order",
    "size_granularity",
    "write_plan",
]
