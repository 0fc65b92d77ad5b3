"""MSCCL++ execution plans of ForestColl schedules, and a checker that executes them symbolically.

- :func:`build_plan` (``solver.mscclpp.generate``): Schedule -> plan document (JSON) for the
  executor of microsoft/mscclpp v0.10.0;
- :func:`check_plan` / :func:`check_plan_file` (``solver.mscclpp.interpreter``): the reader's
  rules (``solver.mscclpp.plan``) + symbolic execution + result check.

Every plan this package writes has passed the checker first.
"""

from __future__ import annotations

import json
import os

from solver.io.files import atomic_write_text
from solver.model.schedule import Schedule
from solver.mscclpp.generate import CHANNEL_CHOICES, build_plan, rank_order
from solver.mscclpp.interpreter import PlanReport, check_plan, check_plan_file, check_plan_text
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


def export_plan(schedule: Schedule, **options) -> tuple[str, PlanReport]:
    """The checked plan text of ``schedule`` and its check report (options of :func:`build_plan`)."""
    doc = build_plan(schedule, **options)
    text = plan_text(doc)
    report = check_plan_text(text, "generated plan", options.get("resident"))
    return text, report


def write_plan(path: str | os.PathLike, schedule: Schedule, **options) -> PlanReport:
    """Export, check, then write ``path`` atomically; returns the check report."""
    text, report = export_plan(schedule, **options)
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise MscclppError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return report


__all__ = [
    "CHANNEL_CHOICES",
    "COMMIT",
    "RELEASE",
    "MscclppError",
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
