"""The three allreduce figures of a fabric whose switches reduce or multicast, in words (no Qt).

:func:`compute` runs :func:`solver.algorithm.capability_bounds.capability_bounds` (max-flows: call
it off the GUI thread, as the solve worker's display preparation does); the other functions turn
its result into the summary's rows, the canvas caption's line and the sentence that names the
switches making the difference ("b0.nvsw reduces and multicasts: allreduce 450 GB/s instead of
257.14"). A fabric without marked switches gets None and nothing changes on screen.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from fractions import Fraction

from fc_gui.model.result_text import num_text
from solver.algorithm.capability_bounds import CapabilityBounds, capability_bounds
from solver.model.errors import ForestCollError
from solver.model.topology import CAPABILITIES, Topology

#: switches named in a sentence before "and N more"
MAX_NAMED = 3


@dataclass(frozen=True)
class SwitchBounds:
    """The allreduce figures of one fabric (``bounds``), or why they are missing (``error``);
    ``marked``: (switch, its capabilities in words) of every marked switch."""

    marked: tuple[tuple[str, str], ...]
    bounds: CapabilityBounds | None = None
    error: str = ""


def compute_marked(topo: Topology) -> tuple[tuple[str, str], ...]:
    """(switch, what it does in words) of every marked switch of ``topo``."""
    return tuple(
        (n.id, " and ".join(_verb(c) for c in CAPABILITIES if c in n.capabilities))
        for n in topo.nodes
        if n.capabilities
    )


def compute(topo: Topology) -> SwitchBounds | None:
    """The figures of ``topo`` (allreduce), None when no switch reduces or multicasts."""
    marked = compute_marked(topo)
    if not marked:
        return None
    if len(topo.compute_ids) < 2:
        return SwitchBounds(marked, error="fewer than two compute nodes")
    try:
        return SwitchBounds(marked, capability_bounds(topo, "allreduce"))
    except ForestCollError as exc:  # over a cost limit: said, never a freeze
        return SwitchBounds(marked, error=str(exc))


def _verb(capability: str) -> str:
    return {"reduce": "reduces", "multicast": "multicasts"}.get(capability, capability)


def names_text(ids: list[str]) -> str:
    """``a``, ``a, b``, ``a, b, c and 2 more``."""
    shown = ", ".join(ids[:MAX_NAMED])
    return shown + (f" and {len(ids) - MAX_NAMED} more" if len(ids) > MAX_NAMED else "")


def gbps(x: Fraction) -> str:
    """``400`` or ``266.67``: two decimals at most, as the command line prints them."""
    return num_text(x, 2)


def makes_difference(sb: SwitchBounds) -> tuple[str, ...]:
    """The switches whose capabilities raise the allreduce figure above forwarding (the NVLS
    domain switches of the construction), () when none does."""
    b = sb.bounds
    if b is None or b.capability <= b.forward_only or b.hierarchical is None:
        return ()
    return tuple(w for w, _ in b.hierarchical.domains)


def difference_text(sb: SwitchBounds) -> str:
    """One sentence: which switch makes the difference and by how much, or why none does."""
    b = sb.bounds
    if b is None:
        return f"allreduce bounds not computed: {sb.error}"
    who = makes_difference(sb)
    if who:
        verb = "reduces and multicasts" if len(who) == 1 else "reduce and multicast"
        return (
            f"{names_text(list(who))} {verb}: allreduce {gbps(b.capability)} GB/s instead of "
            f"{gbps(b.forward_only)}"
        )
    ids = [s for s, _ in sb.marked]
    h = b.hierarchical
    if h is not None and not h.applies:
        why = h.reason
    elif h is not None and h.algbw > 0:
        why = f"the hierarchical NVLS schedule reaches only {gbps(h.algbw)} GB/s here" + (
            "" if h.concurrent else ": its index groups share links and run one after another"
        )
    else:
        why = "forwarding is as fast"
    return (
        f"{names_text(ids)} marked ({sb.marked[0][1]}{', …' if len(ids) > 1 else ''}), but no "
        f"schedule gains from it ({why}): allreduce stays {gbps(b.forward_only)} GB/s"
    )


def figure_rows(sb: SwitchBounds, collective: str) -> list[tuple[str, str]]:
    """(label, rich text) rows for the summary: the sentence and the three figures."""
    esc = html.escape
    b = sb.bounds
    by_what: dict[str, list[str]] = {}
    for sw, what in sb.marked:
        by_what.setdefault(what, []).append(sw)

    def verb(what: str, ids: list[str]) -> str:  # "b0.nvsw reduces", "b0.nvsw, b1.nvsw reduce"
        return (
            what
            if len(ids) == 1
            else what.replace("reduces", "reduce").replace("multicasts", "multicast")
        )

    rows = [
        (
            "Switches",
            esc("; ".join(f"{names_text(ids)} {verb(what, ids)}" for what, ids in by_what.items())),
        )
    ]
    if b is None:
        return rows + [("Allreduce bounds", f"<i>not computed: {esc(sb.error)}</i>")]
    rows.append(
        (
            "Forward-only",
            f"{esc(gbps(b.forward_only))} GB/s allreduce "
            "(switches forward: ForestColl's schedules)",
        )
    )
    state = (
        "exact: meets the any-schedule bound"
        if b.exact
        else (f"constructed, {100 * float(b.gap):.1f} % below the any-schedule bound")
    )
    rows.append(
        (
            "With capabilities",
            f"<b>{esc(gbps(b.capability))} GB/s</b> ({esc(state)}; {esc(b.construction)})",
        )
    )
    rows.append(
        (
            "Any schedule",
            f"≤ {esc(gbps(b.any_schedule))} GB/s (no schedule beats it, "
            "whatever the switches do: min over cuts of min(B⁺(S), B⁻(S)))",
        )
    )
    if collective != "allreduce":
        rows.append(
            (
                "",
                f"{esc(collective)}: a switch that reduces or multicasts does not "
                "raise its bound; the optimum above is all three figures",
            )
        )
    return rows


def lead_row(sb: SwitchBounds) -> tuple[str, str]:
    """The summary's row under the optimum: the sentence naming the switch that makes the
    difference (in bold), where it is seen without scrolling."""
    label = "In-switch" if makes_difference(sb) else "Marked switches"
    return label, f"<b>{html.escape(difference_text(sb))}</b>"


def caption_line(sb: SwitchBounds) -> str:
    """The line the canvas caption adds under the cut: the sentence and the bound."""
    b = sb.bounds
    if b is None:
        return f"Allreduce with {sb.marked[0][0]}'s capabilities: not computed ({sb.error})"
    text = difference_text(sb)
    if makes_difference(sb):
        text += (
            " (exact, the any-schedule bound)"
            if b.exact
            else f"; any schedule ≤ {gbps(b.any_schedule)}"
        )
    return text
