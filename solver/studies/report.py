"""What a study tells its user: the ``--json`` document, a summary and a text table.

JSON keys (stable): ``study``, ``base`` ({"algbw", "algbw_exact"}, not for sweeps) and ``rows``
(each with ``element`` or the sweep parameters, ``kind``, ``algbw``, ``algbw_exact``,
``change``, ``connected``, ...). NaN values are written as null.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from solver.studies.runner import StudyResult
from solver.studies.tasks import FAILURES, SWEEP, UPGRADE

WORST = 5  # elements listed in a summary


def ranked(study: str, rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Rows by impact: failures worst first, upgrades best gain first, sweeps as given."""
    if study == FAILURES:
        return sorted(rows, key=lambda r: _num(r["change"]))
    if study == UPGRADE:
        return sorted(rows, key=lambda r: -_num(r["change"]))
    return list(rows)


def _num(value: float) -> float:
    return 0.0 if value is None or math.isnan(value) else value


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def summary(study: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Study-level facts: worst/best rows, minimum, free/blocked/disconnected counts."""
    if not rows:
        return {"rows": 0}
    order = ranked(study, rows)
    out: dict[str, Any] = {"rows": len(rows)}
    if study == FAILURES:
        worst = min(rows, key=lambda r: r["algbw"])
        out.update(
            min_algbw=worst["algbw"],
            min_algbw_exact=worst["algbw_exact"],
            worst=[r["element"] for r in order[:WORST]],
            free=sum(1 for r in rows if r["change"] == 0),
            disconnecting=sum(1 for r in rows if not r["connected"]),
        )
    elif study == UPGRADE:
        best = order[0]
        out.update(
            max_algbw=best["algbw"],
            max_algbw_exact=best["algbw_exact"],
            best=[r["element"] for r in order[:WORST] if r["change"] > 0],
            gaining=sum(1 for r in rows if r["change"] > 0),
            blocked=sum(1 for r in rows if r.get("blocked")),
        )
    else:
        best = max(rows, key=lambda r: r["algbw"])
        out.update(
            max_algbw=best["algbw"],
            best=best["point"],
            failed=sum(1 for r in rows if not r["connected"]),
        )
    return out


def to_json(result: StudyResult) -> dict[str, Any]:
    """The ``--json`` document of a study."""
    plan = result.plan
    doc: dict[str, Any] = {
        "study": plan.study,
        "name": result.name,
        "collective": plan.collective,
        "parameters": plan.parameters,
    }
    if plan.study != SWEEP:
        doc["base"] = {"algbw": float(plan.base.algbw), "algbw_exact": str(plan.base.algbw)}
        doc["symmetry"] = {
            "method": plan.symmetry,
            "elements": len(plan.keys),
            "orbits": len(plan.items) + len(plan.free_rows),
        }
    doc["summary"] = summary(plan.study, result.rows)
    doc["timing"] = {
        "wall_s": result.elapsed,
        "solves": result.solved,
        "resumed_rows": result.resumed,
        "workers": result.workers,
    }
    rows = []
    for row in ranked(plan.study, result.rows):
        rows.append({k: _clean(v) for k, v in row.items()})
    doc["rows"] = rows
    return doc


def text(result: StudyResult, limit: int = 20) -> str:
    """A human summary and the first ``limit`` rows by impact."""
    plan = result.plan
    s = summary(plan.study, result.rows)
    lines = [
        f"study {result.name!r}: {plan.study}, {plan.collective}, {len(result.rows)} rows "
        f"({result.solved} solves, {result.resumed} resumed) in {result.elapsed:.1f} s "
        f"on {result.workers} worker(s)"
    ]
    if plan.study != SWEEP:
        lines.append(f"intact optimum {float(plan.base.algbw):.6g} GB/s = {plan.base.algbw} GB/s")
        lines.append(
            f"symmetry: {plan.symmetry}; {len(plan.keys)} elements in "
            f"{len(plan.items) + len(plan.free_rows)} orbits"
        )
    if plan.study == FAILURES:
        lines.append(
            f"minimum over single failures {s.get('min_algbw', 0):.6g} GB/s; "
            f"{s.get('free', 0)} elements free (no drop); "
            f"{s.get('disconnecting', 0)} disconnect compute nodes"
        )
    elif plan.study == UPGRADE:
        lines.append(
            f"{s.get('gaining', 0)} upgrades gain; {s.get('blocked', 0)} cross the "
            "bottleneck but another cut binds right behind it (headroom = the optimum after)"
        )
    lines.append("")
    lines.append(_table(plan.study, ranked(plan.study, result.rows)[:limit]))
    if len(result.rows) > limit:
        lines.append(f"... {len(result.rows) - limit} more rows (--json or -o FILE for all)")
    return "\n".join(lines)


def _table(study: str, rows: Sequence[Mapping[str, Any]]) -> str:
    if study == SWEEP:
        head = f"{'point':<28} {'algbw GB/s':>12} {'change %':>9} {'k':>5} {'height':>7} {'solve s':>8}"
        body = [
            f"{r['point'][:28]:<28} {r['algbw']:>12.6g} {_pct(r['change_pct'])} {r['k']:>5} "
            f"{r['height_max']:>7} {r['solve_time']:>8.3f}"
            for r in rows
        ]
    else:
        extra = " headroom" if study == UPGRADE else ""
        head = f"{'element':<32} {'kind':<7} {'algbw GB/s':>12} {'change %':>9} conn{extra}"
        body = []
        for r in rows:
            line = (
                f"{r['element'][:32]:<32} {r['kind']:<7} {r['algbw']:>12.6g} "
                f"{_pct(r['change_pct'])} {'yes' if r['connected'] else 'NO ':<4}"
            )
            if study == UPGRADE:
                line += (
                    " blocked"
                    if r["blocked"]
                    else (f" {r['headroom']:.6g}" if not math.isnan(r["headroom"]) else "")
                )
            body.append(line)
    return "\n".join([head, *body])


def _pct(value: float) -> str:
    return f"{'n/a':>9}" if value is None or math.isnan(value) else f"{value:>+9.2f}"
