"""Run a study plan on a Dask engine, streaming finished rows into the results file.

Rows reach the file in batches, each batch one atomic rewrite (at most every ``flush_s``
seconds, and always before returning or raising), so an interrupted study keeps what it
computed; ``resume=True`` reads the rows already in ``/studies/<name>`` and computes only the
others. A sweep's change is measured against its first point, which is submitted first.

Resumed rows are input from a file and are checked before they are kept (:func:`check_resumed`):
every row must be a row of this plan with a readable exact optimum that agrees with its float;
removing a link, switch or NIC cannot raise the optimum above the intact fabric's and an upgrade
cannot lower it; an upgrade row the plan knows without a solve must hold that value; and
:data:`RESUME_CHECK_ROWS` rows chosen by a seeded generator (a sweep: its first point, the
reference of every change) are solved again and must match exactly. A study row carries no
certificate of its lower bound (that is the max-flow the study exists to compute), so a row
forged within those bounds and not drawn is kept: run without ``--resume`` to recompute all.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from solver.io.hdf5.studies import has_study, read_study, write_study_rows
from solver.model.errors import ForestCollError
from solver.model.values import exact_number
from solver.studies.columns import row_key
from solver.studies.elements import COMPUTE
from solver.studies.engine import DaskEngine
from solver.studies.plans import StudyPlan
from solver.studies.tasks import FAILURES, SWEEP, UPGRADE, evaluate_batch, exact_text

MAX_BATCH = 16  # elements per task at most: enough to hide scheduling overhead
TASKS_PER_WORKER = 4  # at least this many tasks per worker when there is enough work
RESUME_CHECK_ROWS = 8  # resumed rows solved again before the others are trusted (seeded choice)
RESUME_CHECK_SEED = 21


@dataclass
class StudyResult:
    """A finished (or resumed-and-finished) study: rows in the plan's order."""

    plan: StudyPlan
    name: str
    rows: list[dict[str, Any]]
    solved: int  # optimum solves (or sweep solves) run by this call
    resumed: int  # rows read back from the file
    elapsed: float  # seconds
    workers: int


def default_name(plan: StudyPlan) -> str:
    """``failures_allgather``, ``upgrade_allreduce``, ``sweep_dgx_a100_allgather``..."""
    if plan.study == SWEEP:
        source = plan.parameters.get("template") or "files"
        return f"sweep_{source}_{plan.collective}"
    return f"{plan.study}_{plan.collective}"


def batches_of(items: Sequence[Any], threads: int, size: int | None = None) -> list[list[Any]]:
    """Split ``items`` into batches: ``size`` each, or enough for every worker to stay busy."""
    if size is None:
        size = max(1, min(MAX_BATCH, math.ceil(len(items) / (TASKS_PER_WORKER * threads))))
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def _attrs(plan: StudyPlan) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "study": plan.study,
        "collective": plan.collective,
        "parameters_json": json.dumps(plan.parameters, sort_keys=True),
        "symmetry": plan.symmetry,
        "orbits": len(plan.items) + len(plan.free_rows),
        "rows_total": len(plan.keys),
        "algbw_units": "GB/s",
    }
    for key, value in plan.parameters.items():
        attrs[key] = value
    if plan.base is not None:
        attrs["base_algbw"] = float(plan.base.algbw)
        attrs["base_algbw_exact"] = exact_text(plan.base.algbw)
    return attrs


def _key(item: Any) -> str:
    return item.key


def _load_done(plan: StudyPlan, output, name: str) -> dict[str, dict[str, Any]]:
    if output is None:
        raise ForestCollError("--resume needs the results file (-o FILE)")
    if not has_study(output, name):
        return {}
    stored = read_study(output, name)
    if stored.study != plan.study or json.loads(json.dumps(plan.parameters)) != stored.parameters:
        raise ForestCollError(
            f"{output}: study {name!r} was run with other parameters "
            f"({json.dumps(stored.parameters, sort_keys=True)}); use another --name or drop --resume"
        )
    done = {row_key(r): r for r in stored.rows}
    check_resumed(plan, done, f"{output}: study {name!r}")
    return done


def check_resumed(plan: StudyPlan, done: dict[str, dict[str, Any]], where: str) -> None:
    """Refuse stored rows that cannot be rows of ``plan`` (see the module docstring); raises
    :class:`ForestCollError` naming the row and the rule."""
    keys = set(plan.keys)
    free = {row_key(r): r for raw in plan.free_rows for r in plan.expand(raw)}
    base = plan.base.algbw if plan.base is not None else None
    for key, row in done.items():
        rw = f"{where}: row {key!r}"
        if key not in keys:
            raise ForestCollError(f"{rw} is not a row of this study")
        value = exact_number(
            str(row.get("algbw_exact", "")), f"{rw} algbw_exact", error=ForestCollError
        )
        if value < 0:
            raise ForestCollError(f"{rw}: algbw {float(value):.6g} GB/s is negative")
        if row.get("algbw") != float(value):
            raise ForestCollError(
                f"{rw}: algbw {row.get('algbw')!r} GB/s disagrees with "
                f"algbw_exact {exact_text(value)}"
            )
        if not row.get("connected") and value != 0:
            raise ForestCollError(
                f"{rw}: a disconnected fabric has algbw 0, not {float(value):.6g}"
            )
        element = plan.elements.get(key)
        if (
            plan.study == FAILURES
            and element is not None
            and element.kind != COMPUTE
            and value > base
        ):
            raise ForestCollError(
                f"{rw}: algbw {float(value):.6g} GB/s exceeds the intact fabric's "
                f"{float(base):.6g} GB/s (removing a {element.kind} cannot raise the optimum)"
            )
        if plan.study == UPGRADE and value < base:
            raise ForestCollError(
                f"{rw}: algbw {float(value):.6g} GB/s is below the intact fabric's "
                f"{float(base):.6g} GB/s (an upgrade cannot lower the optimum)"
            )
        if key in free and Fraction(free[key]["algbw_exact"]) != value:
            raise ForestCollError(
                f"{rw}: algbw {float(value):.6g} GB/s, but this upgrade leaves the bottleneck "
                f"at {float(Fraction(free[key]['algbw_exact'])):.6g} GB/s"
            )
    for key in _drawn(plan, done, free):
        again = _solve_again(plan, key)
        if Fraction(again["algbw_exact"]) != Fraction(done[key]["algbw_exact"]):
            raise ForestCollError(
                f"{where}: row {key!r}: stored algbw {done[key]['algbw']:.6g} GB/s, solved "
                f"again {again['algbw']:.6g} GB/s (the file's rows are not this study's; run "
                "without --resume)"
            )


def _drawn(plan: StudyPlan, done, free) -> list[str]:
    """The resumed rows solved again: a sweep's first point, else a seeded sample."""
    if plan.study == SWEEP:
        return [plan.keys[0]] if plan.keys and plan.keys[0] in done else []
    import random

    candidates = sorted(k for k in done if k not in free)
    rng = random.Random(RESUME_CHECK_SEED)
    return rng.sample(candidates, min(RESUME_CHECK_ROWS, len(candidates)))


def _solve_again(plan: StudyPlan, key: str) -> dict[str, Any]:
    if plan.study == SWEEP:
        (point,) = [p for p in plan.items if p.key == key]
        return evaluate_batch(plan.context, [point])[0]
    rep = plan.orbits.representative[key] if plan.orbits is not None else key
    (raw,) = evaluate_batch(plan.context, [plan.elements[rep]])
    return next(r for r in plan.expand(raw) if row_key(r) == key)


def run_study(
    plan: StudyPlan,
    engine: DaskEngine,
    *,
    output: str | Path | None = None,
    name: str | None = None,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
    cancel: Any = None,
    batch_size: int | None = None,
    flush_s: float = 1.0,
    on_rows: Callable[[list[dict[str, Any]]], None] | None = None,
) -> StudyResult:
    """Run ``plan`` on ``engine`` (entered); see the module docstring.

    ``progress(rows_done, rows_total)`` is called after every finished batch; ``on_rows``
    receives the new rows. Raises :class:`~solver.model.errors.Cancelled` when ``cancel`` is
    set (rows finished so far are in the file).
    """
    started = time.perf_counter()
    name = name or default_name(plan)
    done = _load_done(plan, output, name) if resume else {}
    resumed = len(done)
    total = len(plan.keys)
    if plan.study == SWEEP and plan.keys and plan.keys[0] in done:
        plan.reference = Fraction(done[plan.keys[0]]["algbw_exact"])
    attrs = _attrs(plan)
    file_topology = plan.topology
    if plan.study == SWEEP and output is not None and Path(output).exists():
        file_topology = None  # a sweep has many fabrics: add it to any results file
    state = {"fresh": not resume, "last": time.monotonic()}
    buffer: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []  # sweep rows waiting for the first point

    def flush(complete: bool) -> None:
        if output is None or (not buffer and not state["fresh"] and not complete):
            return
        write_study_rows(
            output,
            file_topology,
            name,
            attrs,
            plan.columns,
            buffer,
            complete=complete,
            fresh=state["fresh"],
        )
        state["fresh"] = False
        state["last"] = time.monotonic()
        buffer.clear()

    def accept(raw_rows: list[dict[str, Any]]) -> None:
        new = []
        for raw in raw_rows:
            for row in plan.expand(raw):
                key = row_key(row)
                if key in done:
                    continue
                if plan.study == SWEEP and plan.reference is None:
                    if key != plan.keys[0]:
                        held.append(row)
                        continue
                    plan.reference = Fraction(row["algbw_exact"])
                    row = plan.finish(row)
                    new.append(row)
                    new.extend(plan.finish(r) for r in held)
                    held.clear()
                    continue
                new.append(plan.finish(row))
        for row in new:
            done[row_key(row)] = row
        buffer.extend(new)
        if on_rows is not None and new:
            on_rows(new)
        if progress is not None:
            progress(len(done), total)

    todo = [it for it in plan.items if any(k not in done for k in plan.members(_key(it)))]
    solved = 0
    try:
        flush(False)
        accept(plan.free_rows)
        batches = batches_of(todo, engine.nthreads, 1 if plan.study == SWEEP else batch_size)
        for rows in engine.run(evaluate_batch, plan.context, batches, cancel=cancel):
            solved += len(rows)
            accept(rows)
            if time.monotonic() - state["last"] >= flush_s:
                flush(False)
    finally:
        if held:  # interrupted before the first sweep point: keep the rows, change unknown
            buffer.extend(plan.finish(r) for r in held)
        flush(len(done) == total)
    rows = [done[k] for k in plan.keys if k in done]
    return StudyResult(
        plan, name, rows, solved, resumed, time.perf_counter() - started, engine.nthreads
    )


def save_result(path: str | Path, result: StudyResult) -> None:
    """Write every row of ``result`` to ``/studies/<name>`` of ``path`` (replacing that study)."""
    plan = result.plan
    topology = plan.topology
    if plan.study == SWEEP and Path(path).exists():
        topology = None
    write_study_rows(
        path,
        topology,
        result.name,
        _attrs(plan),
        plan.columns,
        result.rows,
        complete=len(result.rows) == len(plan.keys),
        fresh=True,
    )
