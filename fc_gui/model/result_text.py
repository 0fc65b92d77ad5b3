"""Texts that describe a solved schedule: number formats, the bound's formula, the summary (rich
text) and the bottleneck-cut caption. Pure functions (no Qt): the views show what these return.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from fractions import Fraction

from solver.model.schedule import BottleneckCut, Schedule


def frac_text(value: Fraction, digits: int = 3) -> str:
    """``346.667 (= 1040/3)``, or just ``300`` for integers."""
    if value.denominator == 1:
        return f"{value.numerator}"
    return f"{float(value):.{digits}f} (= {value.numerator}/{value.denominator})"


def num_text(value: Fraction, digits: int = 3) -> str:
    """A compact decimal: ``300`` or ``346.667``."""
    if value.denominator == 1:
        return f"{value.numerator}"
    return f"{float(value):.{digits}f}".rstrip("0").rstrip(".")


def cut_formula(schedule: Schedule) -> tuple[str, Fraction] | None:
    """The bound's formula for a one-phase schedule: (text, N·B⁺(S*)/|S*∩Vc|), or None."""
    cut = schedule.bottleneck
    if cut is None or cut.compute_nodes_inside <= 0:
        return None
    n = schedule.num_compute_nodes
    inside = cut.compute_nodes_inside
    bound = Fraction(n) * cut.egress_bandwidth / inside
    text = (
        f"algbw* = N · B⁺(S*) / |S*∩Vc| = {n} · {num_text(cut.egress_bandwidth)} / {inside}"
        f" = {num_text(bound)} GB/s"
    )
    return text, bound


def summary_html(
    schedule: Schedule,
    elapsed: float | None = None,
    stale: bool = False,
    previous: Schedule | None = None,
) -> str:
    """The summary as rich text (also used by the screenshot and tests)."""
    esc = html.escape
    rows: list[tuple[str, str]] = []
    n = schedule.num_compute_nodes
    rows.append(("Collective", f"{esc(schedule.collective)} on {n} compute nodes"))
    rows.append(("Optimal algbw", f"<b>{esc(frac_text(schedule.optimal_algbw_exact))} GB/s</b>"))
    if previous is not None and previous.optimal_algbw_exact:
        before = previous.optimal_algbw_exact
        change = float((schedule.optimal_algbw_exact - before) / before)
        rows.append(
            (
                "What if",
                f"before {esc(num_text(before))} GB/s → now "
                f"{esc(num_text(schedule.optimal_algbw_exact))} GB/s "
                f"(<b>{100 * change:+.1f}%</b>)",
            )
        )
    limit = schedule.max_trees_per_root
    if limit is not None or schedule.algbw_exact != schedule.optimal_algbw_exact:
        ratio = (
            float(schedule.algbw_exact / schedule.optimal_algbw_exact)
            if schedule.optimal_algbw_exact
            else 0.0
        )
        label = f"algbw, K = {limit}" if limit is not None else "Schedule algbw"
        rows.append((label, f"{esc(frac_text(schedule.algbw_exact))} GB/s ({100 * ratio:.1f}%)"))
    trees = schedule.all_trees()
    rows.append(("Trees", f"k = {schedule.k} per root, {len(trees)} distinct"))
    timings = dict(schedule.timings)
    total = elapsed if elapsed is not None else sum(float(v) for v in timings.values())
    if timings:
        parts = ", ".join(f"{esc(k.replace('_', ' '))} {float(v):.2f}" for k, v in timings.items())
        rows.append(("Solve time", f"{total:.2f} s ({parts})"))
    elif elapsed is not None:
        rows.append(("Solve time", f"{elapsed:.2f} s"))

    phases = schedule.phases or (schedule,)
    cut_rows: list[tuple[str, str]] = []
    for phase in phases:
        cut = phase.bottleneck
        if cut is None:
            continue
        prefix = f"{phase.collective}: " if schedule.phases else ""
        cut_rows.append(
            (
                f"{esc(prefix)}Bottleneck S*",
                f"{len(cut.nodes)} nodes, |S*∩Vc| = {cut.compute_nodes_inside}, "
                f"B⁺(S*) = {esc(num_text(cut.egress_bandwidth))} GB/s over {len(cut.links)} links",
            )
        )
        formula = cut_formula(phase)
        if formula is not None:
            cut_rows.append(("Bound", esc(formula[0])))
    if schedule.phases and len(schedule.phases) == 2:
        cut_rows.append(
            ("", "allreduce = reduce-scatter then allgather: 1/algbw = 1/algbw_rs + 1/algbw_ag")
        )
    rows.extend(cut_rows)
    body = "".join(
        f"<tr><td style='color:#555;padding-right:8px'>{k}</td><td>{v}</td></tr>" for k, v in rows
    )
    extra = ""
    if stale:
        extra += "<p style='color:#9a6b00'>⚠ Stale: the fabric changed since this solve.</p>"
    for w in schedule.warnings:
        extra += f"<p style='color:#b35c00'>⚠ {esc(w)}</p>"
    return f"<table cellspacing='0' cellpadding='1'>{body}</table>{extra}"


def cut_caption(cut: BottleneckCut, all_nodes: Sequence[str], num_compute: int | None) -> str:
    """Two or three lines naming S* (or its complement when that is shorter) and its numbers."""
    inside = set(cut.nodes)
    outside = [n for n in all_nodes if n not in inside]
    if 0 < len(outside) <= 3 and len(outside) < len(cut.nodes):
        which = f"S* = all nodes except {', '.join(outside)}"
    elif len(cut.nodes) <= 4:
        which = f"S* = {{{', '.join(cut.nodes)}}}"
    else:
        which = f"S* = {len(cut.nodes)} shaded nodes"
    bw = cut.egress_bandwidth
    lines = [
        f"Bottleneck cut: {which}",
        f"|S*∩Vc| = {cut.compute_nodes_inside},  B⁺(S*) = {bw_text(bw)} GB/s "
        f"on {len(cut.links)} link{'s' * (len(cut.links) != 1)} leaving S* (dashed)",
    ]
    if num_compute:
        x = Fraction(bw) / cut.compute_nodes_inside
        lines.append(
            f"algbw* = N·B⁺(S*)/|S*∩Vc| = {num_compute}·{bw_text(bw)}/{cut.compute_nodes_inside}"
            f" = {float(num_compute * x):.6g} GB/s"
        )
    return "\n".join(lines)


def bw_text(bw: Fraction) -> str:
    return f"{bw.numerator}" if bw.denominator == 1 else f"{float(bw):.4g}"
