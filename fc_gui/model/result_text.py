"""Texts that describe a solved schedule (and the counts of a fabric): number formats, the bound's formula, the summary (rich
text) and the bottleneck-cut caption. Pure functions (no Qt): the views show what these return.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
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
    fabric_warnings: Sequence[str] = (),
    split: tuple[float, float] | None = None,
    switch_rows: Sequence[tuple[str, str]] = (),
    switch_lead: tuple[str, str] | None = None,
) -> str:
    """The summary as rich text (also used by the screenshot and tests).

    ``switch_rows``: (label, rich text) rows of the allreduce figures when some switch reduces
    or multicasts (:func:`fc_gui.model.switch_bounds.figure_rows`), under the cut;
    ``switch_lead``: the row naming the switch that makes the difference, under the optimum.

    ``elapsed``: the wall time from pressing Solve to the result; ``split``: the part of it in
    the solve call and in preparing the display (:func:`solve_time_text`).

    ``fabric_warnings``: what is wrong with the fabric itself (a box whose GPUs meet only
    through PCIe, :func:`solver.model.scale_up.scale_up_warnings`), said under the numbers.
    """
    esc = html.escape
    rows: list[tuple[str, str]] = []
    n = schedule.num_compute_nodes
    rows.append(("Collective", f"{esc(schedule.collective)} on {n} compute nodes"))
    rows.append(("Optimal algbw", f"<b>{esc(frac_text(schedule.optimal_algbw_exact))} GB/s</b>"))
    if switch_lead is not None:
        rows.append(switch_lead)
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
    text = solve_time_text(dict(schedule.timings), elapsed, split)
    if text:
        rows.append(("Solve time", esc(text)))

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
                f"B⁺(S*) = {esc(num_text(cut.egress_bandwidth))} GB/s over {plural(len(cut.links), 'link')}",
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
    if switch_rows:
        rows.append(("<b>Allreduce</b>", "<b>three figures (algbw)</b>"))
        rows.extend(switch_rows)
    body = "".join(
        f"<tr><td style='color:#555;padding-right:8px'>{k}</td><td>{v}</td></tr>" for k, v in rows
    )
    head = ""
    if stale:  # first, so it is seen before the (greyed) numbers
        head = (
            "<p style='color:#9a6b00'><b>⚠ Stale:</b> the fabric changed since this solve; "
            "the numbers below are of the old fabric. Solve again.</p>"
        )
    extra = ""
    for w in schedule.warnings:
        extra += f"<p style='color:#b35c00'>⚠ {esc(w)}</p>"
    for w in fabric_warnings:
        extra += f"<p style='color:#b35c00'><b>⚠ Fabric:</b> {esc(w)}</p>"
    return f"{head}<table cellspacing='0' cellpadding='1'>{body}</table>{extra}"


def optimum_html(result, elapsed: float | None = None) -> str:
    """Solve > Optimum and cut only, as rich text for the Results dock: the exact optimum of
    each phase and its bottleneck cut, with no trees (``result``: an
    :class:`solver.algorithm.optimum_only.OptimumResult`)."""
    esc = html.escape
    n = len(result.topology.compute_ids)
    rows = [
        ("Collective", f"{esc(result.collective)} on {n} compute nodes"),
        ("Optimal algbw", f"<b>{esc(frac_text(result.algbw))} GB/s</b>"),
        ("Trees", "none: optimum and cut only (Solve builds the schedule)"),
    ]
    for phase in result.phases:
        cut = phase.cut
        prefix = f"{phase.collective}: " if len(result.phases) > 1 else ""
        rows.append(
            (
                f"{esc(prefix)}Bottleneck S*",
                f"{len(cut.nodes)} nodes, |S*∩Vc| = {cut.compute_nodes_inside}, "
                f"B⁺(S*) = {esc(num_text(cut.egress_bandwidth))} GB/s over "
                f"{plural(len(cut.links), 'link')}",
            )
        )
        rows.append(
            (
                "Bound",
                f"algbw* = N·B⁺(S*)/|S*∩Vc| = {n}·{esc(num_text(cut.egress_bandwidth))}/"
                f"{cut.compute_nodes_inside} = {esc(num_text(phase.algbw))} GB/s",
            )
        )
        rows.append(("Max-flow sinks", esc(phase.orbit_text)))
    spent = sum(result.timings.values())
    rows.append(
        (
            "Time",
            f"{spent:.1f} s solving" + (f", {elapsed:.1f} s from the click" if elapsed else ""),
        )
    )
    body = "".join(
        f"<tr><td style='color:#555;padding-right:8px'>{k}</td><td>{v}</td></tr>" for k, v in rows
    )
    return f"<table cellspacing='0' cellpadding='1'>{body}</table>"


def cut_caption(
    cut: BottleneckCut,
    all_nodes: Sequence[str],
    num_compute: int | None,
    groups: Mapping[str, str | None] | None = None,
    kinds: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """Two or three lines naming S* and its numbers.

    S* is named by whole groups (``box b0``) and single nodes, or as its complement ("all but box
    b0") when that is shorter; a count of shaded nodes when neither is short.
    ``groups``: node id -> group (boxes of a template), if known; ``kinds``: node id -> (kind,
    role), to name a big S* by its GPUs (:func:`cut_set_text`).
    """
    which = f"S* = {cut_set_text(cut.nodes, all_nodes, groups, kinds)}"
    bw = cut.egress_bandwidth
    lines = [
        f"Bottleneck cut: {which}",
        (
            f"|S*∩Vc| = {cut.compute_nodes_inside},  B⁺(S*) = {bw_text(bw)} GB/s "
            f"on {plural(len(cut.links), 'link')} leaving S* (dashed)"
        ),
    ]
    if num_compute:
        x = Fraction(bw) / cut.compute_nodes_inside
        lines.append(
            f"algbw* = N·B⁺(S*)/|S*∩Vc| = {num_compute}·{bw_text(bw)}/{cut.compute_nodes_inside}"
            f" = {float(num_compute * x):.6g} GB/s"
        )
    return "\n".join(lines)


def solve_time_text(
    timings: dict, elapsed: float | None = None, split: tuple[float, float] | None = None
) -> str:
    """The solve time as a sum that adds up: the solver's phases, then what the rest of
    ``elapsed`` was -- the solve call outside its phases (validating the fabric, building the
    result), preparing the display data (``split[1]``), and starting the worker thread and
    handing the result over (what is left)."""
    phases = {k.replace("_", " "): float(v) for k, v in timings.items()}
    in_phases = sum(phases.values())
    parts = ", ".join(f"{k} {v:.2f}" for k, v in phases.items())
    if elapsed is None:
        return f"{in_phases:.2f} s ({parts})" if phases else ""
    if not phases:
        return f"{elapsed:.2f} s"
    rest = elapsed - in_phases
    if rest < 0.005:
        return f"{elapsed:.2f} s ({parts})"
    if split is None:
        return f"{elapsed:.2f} s = phases {in_phases:.2f} ({parts}) + {rest:.2f} outside them"
    solve_s, prepare_s = split
    terms = (
        ("solver set-up and checks", max(solve_s - in_phases, 0.0)),
        ("display data", prepare_s),
        ("thread start and hand-over", max(elapsed - solve_s - prepare_s, 0.0)),
    )
    added = "".join(f" + {what} {v:.2f}" for what, v in terms if v >= 0.005)  # no "+ x 0.00"
    return f"{elapsed:.2f} s = phases {in_phases:.2f} ({parts}){added}"


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``1 link``, ``2 links``, ``0 switches`` (``plural_form``: when not noun + "s")."""
    if count == 1:
        return f"1 {noun}"
    if plural_form is None:
        plural_form = noun + ("es" if noun.endswith(("s", "sh", "ch", "x")) else "s")
    return f"{count} {plural_form}"


def fabric_counts(compute: int, switches: int, links: int) -> str:
    """``16 compute nodes, 1 switch, 48 links``."""
    return (
        f"{plural(compute, 'compute node')}, {plural(switches, 'switch')}, {plural(links, 'link')}"
    )


#: A description naming more items than this falls back to a count.
MAX_NAMED = 3


def group_title(group: str) -> str:
    """``box b0`` for the templates' boxes (``b0``, ``b1``...), else ``group NAME``."""
    if len(group) > 1 and group[0] == "b" and group[1:].isdigit():
        return f"box {group}"
    return f"group {group}"


def _describe_set(chosen: list[str], groups: Mapping[str, str | None]) -> tuple[int, str] | None:
    """(items named, text) naming ``chosen`` by whole groups and single nodes, or None when
    that takes more than :data:`MAX_NAMED` items."""
    members: dict[str, list[str]] = {}
    for node, group in groups.items():
        if group:
            members.setdefault(group, []).append(node)
    inside = set(chosen)
    whole = [g for g, ms in members.items() if len(ms) > 1 and inside.issuperset(ms)]
    covered = {n for g in whole for n in members[g]}
    loose = [n for n in chosen if n not in covered]
    count = len(whole) + len(loose)
    if count == 0 or count > MAX_NAMED:
        return None
    return count, ", ".join([group_title(g) for g in whole] + loose)


#: Words for the devices around the GPUs (a node's role), singular and plural.
ROLE_WORDS = {
    "nic": ("NIC", "NICs"),
    "pcie": ("PCIe switch", "PCIe switches"),
    "cpu": ("CPU", "CPUs"),
    "nvswitch": ("NVSwitch", "NVSwitches"),
    "ib": ("network switch", "network switches"),
    "leaf": ("leaf switch", "leaf switches"),
    "spine": ("spine switch", "spine switches"),
}


def devices_text(ids: Sequence[str], roles: Mapping[str, str]) -> str:
    """``1 NIC, 3 PCIe switches``: the non-GPU nodes ``ids`` counted by role."""
    counts: dict[tuple[str, str], int] = {}
    for n in ids:
        words = ROLE_WORDS.get(roles.get(n, ""), ("switch", "switches"))
        counts[words] = counts.get(words, 0) + 1
    order = sorted(counts.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{c} {one if c == 1 else many}" for (one, many), c in order)


def cut_set_text(
    nodes: Sequence[str],
    all_nodes: Sequence[str],
    groups: Mapping[str, str | None] | None = None,
    kinds: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """S* (``nodes``) in words: ``{a, b}``, ``box b1``, ``all but box b0, b1.nic3``; when the
    whole set takes too many names and ``kinds`` (node -> (kind, role)) are known, by its GPUs
    with the devices beside them counted (``all but b0.gpu0, b0.gpu1 (and 1 NIC, 3 PCIe
    switches beside them)``); a count only when even that is long."""
    groups = {n: None for n in all_nodes} | dict(groups or {})
    groups = {n: groups[n] for n in all_nodes}
    inside = set(nodes)
    chosen = [n for n in all_nodes if n in inside] or list(nodes)
    outside = [n for n in all_nodes if n not in inside]
    own = _describe_set(chosen, groups)
    other = _describe_set(outside, groups) if outside else None
    if other is not None and (own is None or other[0] < own[0]):
        return f"all but {other[1]}"
    if own is not None:
        return (
            own[1]
            if any(t.startswith(("box ", "group ")) for t in own[1].split(", "))
            else f"{{{own[1]}}}"
        )
    if kinds:
        compute = {n for n in all_nodes if kinds.get(n, ("", ""))[0] == "compute"}
        roles = {n: kinds[n][1] for n in all_nodes if n in kinds}
        gpu_groups = {n: g for n, g in groups.items() if n in compute}
        gin = [n for n in chosen if n in compute]
        gout = [n for n in outside if n in compute]
        own = _describe_set(gin, gpu_groups) if gin else None
        other = _describe_set(gout, gpu_groups) if gout else None
        if other is not None and (own is None or other[0] < own[0]):
            rest = [n for n in outside if n not in compute]
            beside = f" (and {devices_text(rest, roles)} beside them)" if rest else ""
            return f"all but {other[1]}{beside}"
        if own is not None:
            rest = [n for n in chosen if n not in compute]
            named = (
                own[1]
                if any(t.startswith(("box ", "group ")) for t in own[1].split(", "))
                else f"{{{own[1]}}}"
            )
            return f"{named} (with {devices_text(rest, roles)})" if rest else named
    return f"{len(nodes)} shaded nodes"


def bw_text(bw: Fraction) -> str:
    return f"{bw.numerator}" if bw.denominator == 1 else f"{float(bw):.4g}"
