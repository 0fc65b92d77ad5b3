"""Lecture mode's content: the steps of a guided walk through one fabric and their texts.

A lecture has four parts: (a) the fabric, (b) the bottleneck cut and its bound with the real
numbers, (c) one spanning tree level by level, (d) the ring baseline beside ForestColl and why
ForestColl reaches the cut bound; and on a fabric with a switch that adds (NVLS, SHARP) a fifth,
(e) why that switch changes allreduce but not allgather, with the open fabric's figures.
:func:`lecture_steps` turns a solved schedule (and, once simulated, a :class:`Comparison`) into
:class:`LectureStep` objects; the views show them and the figure export writes them. Pure
functions (no Qt).
"""

from __future__ import annotations

import html
import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from fc_gui.model.result_text import cut_set_text, group_title, num_text, plural
from fc_gui.model.switch_bounds import SwitchBounds, difference_text, gbps, names_text
from fc_gui.model.trees import Transfer, broadcast_levels, holders
from solver.model.schedule import Schedule, Tree
from solver.model.topology import COMPUTE, Topology

#: Message size of the ring comparison unless the presenter picks another (bytes).
DEFAULT_COMPARE_SIZE = 1 << 30
#: Sizes offered for the comparison.
COMPARE_SIZES = (1 << 20, 16 << 20, 256 << 20, 1 << 30)
#: Levels of the animated tree beyond which the lecture picks a shorter tree.
MAX_TREE_LEVELS = 8
#: Transfers named one by one in a tree step's text (the rest are counted).
MAX_TRANSFERS_NAMED = 6

#: Layers a step can show: the cut shading, the heat map, the tree, node labels, box frames.
LAYERS = ("cut", "heat", "trees", "labels", "frames")


@dataclass(frozen=True)
class LectureStep:
    """One screen of the lecture.

    ``paragraphs`` are plain text (formulas in Unicode); ``table`` rows (the first is the
    header) are shown under them. ``tree_level`` is the tree's animation step (tree steps only,
    else -1). ``layers`` are the canvas layers this step shows (see :data:`LAYERS`).
    """

    key: str
    part: str
    title: str
    paragraphs: tuple[str, ...]
    layers: frozenset[str]
    table: tuple[tuple[str, ...], ...] = ()
    formula: str = ""
    tree_level: int = -1

    def lines(self, width: int = 110, formula: bool = True, table: bool = True) -> list[str]:
        """The step as wrapped plain-text lines (the exported figure's text); ``formula``,
        ``table``: with the formula lines and the table rows after the paragraphs."""
        out: list[str] = []
        for para in self.paragraphs:
            out.extend(textwrap.wrap(para, width) or [""])
        if self.formula and formula:
            out.extend(self.formula.splitlines())
        if self.table and table:
            widths = [max(len(r[i]) for r in self.table) for i in range(len(self.table[0]))]
            for row in self.table:
                out.append("   ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        return out


@dataclass(frozen=True)
class ComparisonRow:
    """One algorithm at the comparison size: simulated algbw and its own link-load limit."""

    algorithm: str
    algbw: float  # GB/s, simulated
    limit: float  # GB/s, the algorithm's route bound (its busiest link at full rate)


@dataclass(frozen=True)
class Comparison:
    """Simulated ring and ForestColl at one message size."""

    size: int
    rows: tuple[ComparisonRow, ...]

    def row(self, algorithm: str) -> ComparisonRow | None:
        return next((r for r in self.rows if r.algorithm == algorithm), None)


@dataclass(frozen=True)
class LecturePlan:
    """What a lecture is built from: the schedule, the tree it animates, the comparison."""

    schedule: Schedule
    tree: Tree
    comparison: Comparison | None = None
    compare_size: int = DEFAULT_COMPARE_SIZE
    groups: dict[str, str | None] = field(default_factory=dict)
    #: the allreduce figures when some switch reduces or multicasts (fc_gui.model.switch_bounds)
    switch_bounds: SwitchBounds | None = None


def size_text(size: int) -> str:
    """``1 GiB``, ``16 MiB``, ``512 KiB``, ``100 B``."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if size >= 1 << shift:
            v = size / (1 << shift)
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.3g} {unit}"
    return f"{size} B"


# ---------------------------------------------------------------------- (a) the fabric
def link_classes(topology: Topology) -> list[tuple[str, str, Fraction, int]]:
    """Links grouped by the roles at their ends and bandwidth: (role a, role b, GB/s, count),
    most links first."""
    role = {n.id: n.role or n.kind for n in topology.nodes}
    count: Counter = Counter()
    for ln in topology.links:
        a, b = sorted((role[ln.source], role[ln.target]))
        count[(a, b, Fraction(ln.bandwidth))] += 1
    return [
        (a, b, bw, c) for (a, b, bw), c in sorted(count.items(), key=lambda kv: (-kv[1], -kv[0][2]))
    ]


def fabric_paragraphs(topology: Topology) -> tuple[str, ...]:
    """What the fabric holds: boxes, compute nodes, switches by role, links by bandwidth."""
    compute = [n for n in topology.nodes if n.kind == COMPUTE]
    switches = [n for n in topology.nodes if n.kind != COMPUTE]
    boxes = sorted({n.group for n in compute if n.group})
    per_box = Counter(n.group for n in compute if n.group)
    where = ""
    if boxes:
        sizes = sorted(set(per_box.values()))
        each = f"{sizes[0]} each" if len(sizes) == 1 else "of different sizes"
        where = f" in {plural(len(boxes), 'box', 'boxes')} ({each})"
    roles = Counter(n.role or n.kind for n in switches)
    # by role ("2 nvswitch, 1 ib"), unless that only says "switch" again
    sw = (
        ""
        if set(roles) <= {"switch"}
        else ", ".join(f"{c} {r}" for r, c in sorted(roles.items(), key=lambda kv: -kv[1]))
    )
    first = (
        f"{plural(len(compute), 'GPU')}{where}, {plural(len(switches), 'switch')}"
        + (f" ({sw})" if sw else "")
        + f", {plural(len(topology.links), 'link')}."
    )
    by_pair: dict[tuple[str, str], list[str]] = {}
    for a, b, bw, c in sorted(link_classes(topology), key=lambda k: -k[2]):
        by_pair.setdefault((a, b), []).append(f"{c} × {num_text(bw)}")
    classes = "; ".join(f"{a}–{b}: {', '.join(parts)} GB/s" for (a, b), parts in by_pair.items())
    return (
        first,
        f"Links (per direction, full duplex): {classes}.",
        (
            "Thicker lines are faster links. Switches only forward data; every GPU holds a shard "
            "of M/N bytes and, in an allgather, must receive every other GPU's shard."
        ),
    )


# ---------------------------------------------------------------------- (b) the cut
def cut_numbers(schedule: Schedule) -> tuple[int, int, Fraction, Fraction]:
    """(N, |S*∩Vc|, B⁺(S*), the algbw bound N·B⁺(S*)/|S*∩Vc|) of a one-phase schedule."""
    cut = schedule.bottleneck
    n = schedule.num_compute_nodes
    inside = cut.compute_nodes_inside
    return n, inside, Fraction(cut.egress_bandwidth), Fraction(n) * cut.egress_bandwidth / inside


def cut_formula_lines(schedule: Schedule) -> str:
    """The time bound and the algbw bound with the cut's numbers (two lines)."""
    n, inside, egress, bound = cut_numbers(schedule)
    return (
        f"T ≥ (M/N)·|S*∩Vc| / B⁺(S*) = (M/{n})·{inside} / {num_text(egress)} GB/s\n"
        f"algbw = M/T ≤ N·B⁺(S*)/|S*∩Vc| = {n}·{num_text(egress)}/{inside}"
        f" = {num_text(bound)} GB/s"
    )


def cut_paragraphs(schedule: Schedule, groups: dict[str, str | None]) -> tuple[str, ...]:
    cut = schedule.bottleneck
    topo = schedule.topology
    all_nodes = [nd.id for nd in topo.nodes]
    kinds = {nd.id: (nd.kind, nd.role) for nd in topo.nodes}
    n, inside, egress, _ = cut_numbers(schedule)
    leaving = ", ".join(
        f"{u}→{v} {num_text(Fraction(bw))}" for u, v, bw in list(cut.links)[:MAX_TRANSFERS_NAMED]
    )
    more = (
        f" and {len(cut.links) - MAX_TRANSFERS_NAMED} more"
        if len(cut.links) > MAX_TRANSFERS_NAMED
        else ""
    )
    return (
        (
            f"S* = {cut_set_text(cut.nodes, all_nodes, groups, kinds)} (shaded): |S*∩Vc| = {inside} of "
            f"the N = {n} GPUs are inside."
        ),
        (
            f"Every shard of a GPU inside S* must reach the GPUs outside, so (M/N)·{inside} bytes "
            f"must leave S* over its {plural(len(cut.links), 'outgoing link')} (dashed): "
            f"B⁺(S*) = {num_text(egress)} GB/s ({leaving}{more})."
        ),
        (
            "No schedule beats this bound; S* is the cut where it is tightest, so this is the "
            "optimum."
        ),
    )


# ---------------------------------------------------------------------- (c) one tree
def pick_tree(schedule: Schedule) -> Tree:
    """The tree the lecture animates: the first root's tallest tree of at most
    :data:`MAX_TREE_LEVELS` levels (the most to show in a few steps; the first on a tie), else
    its shortest (a ring's chains would take a step per GPU)."""
    trees = list(schedule.trees)
    root = trees[0].root
    own = [t for t in trees if t.root == root]
    short = [t for t in own if t.height <= MAX_TREE_LEVELS]
    if short:
        return max(short, key=lambda t: (t.height, -own.index(t)))
    return min(own, key=lambda t: (t.height, own.index(t)))


def partial_tree(tree: Tree, level: int) -> Tree:
    """``tree`` cut to the edges into depth ≤ ``level`` (what a tree step has drawn so far)."""
    depth = tree.depth_of()
    keep = tuple(e for e in tree.edges if max(depth[e.src], depth[e.dst]) <= level)
    return replace(tree, edges=keep)


def transfers_text(transfers: Sequence[Transfer], limit: int = MAX_TRANSFERS_NAMED) -> str:
    """Transfers grouped by sender and route: ``a → b, c, d via s; e → f``; past ``limit``
    groups the rest are counted."""
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for src, dst, path in transfers:
        groups.setdefault((src, tuple(path[1:-1])), []).append(dst)
    parts = [
        f"{src} → {', '.join(dsts)}" + (f" via {', '.join(via)}" if via else "")
        for (src, via), dsts in list(groups.items())[:limit]
    ]
    rest = len(groups) - limit
    return "; ".join(parts) + (f"; and {rest} more" if rest > 0 else "")


def tree_paragraphs(
    schedule: Schedule, tree: Tree, level: int, levels: Sequence[Sequence[Transfer]]
) -> tuple[str, ...]:
    n = schedule.num_compute_nodes
    w = Fraction(tree.weight)
    share = f"{w.numerator}/{w.denominator}" if w.denominator != 1 else "all"
    if level == 0:
        return (
            (
                f"ForestColl splits each GPU's shard over k = {schedule.k} spanning trees rooted at "
                "that GPU; the trees of all roots together keep every link within its bandwidth."
            ),
            (
                f"This tree of {tree.root} carries {share} of its shard, in "
                f"{plural(tree.height, 'level')}. Press Next to send it level by level: only "
                f"{tree.root} (star) holds it now."
            ),
        )
    current = list(levels[level - 1])
    named = transfers_text(current)
    have = len(holders([("allgather", tree)], levels, level))
    done = " Every GPU holds the data: the tree spans the fabric." if have == n else ""
    return (
        (
            f"Level {level} of {len(levels)}: {plural(len(current), 'transfer')} at once (bold): "
            f"{named}."
        ),
        f"{have} of {n} GPUs now hold this piece (yellow).{done}",
    )


# ---------------------------------------------------------------------- (d) the ring
def comparison_table(comparison: Comparison, bound: Fraction) -> tuple[tuple[str, ...], ...]:
    rows: list[tuple[str, ...]] = [
        ("algorithm", "simulated algbw", "its limit", "of the cut bound")
    ]
    for r in comparison.rows:
        rows.append(
            (
                r.algorithm,
                f"{r.algbw:.1f} GB/s",
                f"{r.limit:.1f} GB/s",
                f"{100 * r.algbw / float(bound):.0f} %",
            )
        )
    rows.append(("cut bound", "", f"{float(bound):.1f} GB/s", "100 %"))
    return tuple(rows)


def ring_paragraphs(
    schedule: Schedule, comparison: Comparison | None, size: int
) -> tuple[str, ...]:
    _, _, _, bound = cut_numbers(schedule)
    what = f"allgather of M = {size_text(size)}"
    if comparison is None:
        return (f"Simulating the ring and ForestColl ({what})…",)
    ring, fc = comparison.row("ring"), comparison.row("forestcoll")
    paras = [f"Simulated {what} (links at full rate, chunked transfers)."]
    if ring is not None:
        paras.append(
            f"The ring sends all data around cycles through every GPU, so each cycle runs at "
            f"its slowest hop: at most {ring.limit:.1f} GB/s here, whatever the size."
        )
    if fc is not None:
        share = fc.algbw / float(bound)
        why = (
            "ForestColl's trees load every link in proportion to its bandwidth; the heat map "
            "shows the links leaving S* (dashed) at 100 %: they are busy all the time"
        )
        if share >= 0.9:
            paras.append(
                f"{why}, so the schedule reaches the cut bound {num_text(bound)} GB/s "
                f"(simulated {fc.algbw:.1f} GB/s, {100 * share:.0f} %; the rest is per-hop "
                "latency and the pipeline's start)."
            )
        else:
            paras.append(
                f"{why}, so large messages reach the cut bound {num_text(bound)} GB/s. At this "
                f"size ForestColl simulates at {fc.algbw:.1f} GB/s ({100 * share:.0f} %): per-hop "
                "latency and the pipeline's start dominate small messages."
            )
    if ring is not None and fc is not None and ring.algbw > 0:
        paras.append(f"ForestColl is {fc.algbw / ring.algbw:.2f}× the ring at this size.")
    return tuple(paras)


# ---------------------------------------------------------------------- (e) a switch that adds
def has_reducing_switch(plan: LecturePlan) -> bool:
    """True when some switch of the lecture's fabric reduces (adds what it receives)."""
    return any("reduce" in n.capabilities for n in plan.schedule.topology.nodes)


def switch_step(plan: LecturePlan) -> LectureStep:
    """Why a switch that adds raises allreduce but not allgather, with the fabric's figures
    (the allgather optimum of the lecture's schedule, the allreduce figures of
    ``plan.switch_bounds``)."""
    s = plan.schedule
    topo = s.topology
    n = s.num_compute_nodes
    adders = [nd.id for nd in topo.nodes if "reduce" in nd.capabilities]
    casts = any("multicast" in topo.node(a).capabilities for a in adders[:1])
    who = names_text(adders)
    ag = s.optimal_algbw_exact
    paras = [
        (
            f"{who} {'adds what it receives' if len(adders) == 1 else 'add what they receive'} "
            f"(in-switch reduction{' and multicast' if casts else ''}, as NVLink SHARP and "
            "InfiniBand SHARP do). Everything so far assumed that switches only forward."
        ),
        (
            f"Allgather moves no sums: each GPU must receive the {n - 1} shards it lacks, data "
            "nobody else can compute, and every byte of a shard inside S* still has to cross the "
            "cut, whatever a switch does with it (a multicasting switch spares the senders, not "
            f"the cut). The allgather optimum stays {gbps(ag)} GB/s."
        ),
    ]
    table: tuple[tuple[str, ...], ...] = ()
    formula = f"allgather: T ≥ (M/N)·|S∩Vc| / B⁺(S) for every S, switch or not: {gbps(ag)} GB/s"
    sb = plan.switch_bounds
    b = sb.bounds if sb is not None else None
    if b is None:
        why = sb.error if sb is not None else "being computed in the background"
        paras.append(f"Allreduce needs only the sum. Its figures for this fabric: {why}.")
    else:
        state = (
            "exact: no schedule does better"
            if b.exact
            else (f"the best schedule we can build, {100 * float(b.gap):.1f} % below the bound")
        )
        paras.append(
            "Allreduce needs only the sum. With forwarding switches the GPUs add: reduce-scatter "
            f"then allgather, so each GPU sends and receives {n - 1}/{n} of M twice: at most "
            f"{gbps(b.forward_only)} GB/s here. A switch that adds takes each GPU's part once and "
            "sends back the sum, so each GPU's link carries M each way, once: "
            f"{gbps(b.capability)} GB/s ({state})."
        )
        paras.append(
            "The bound that holds for any schedule: across any cut that splits the GPUs, each "
            "side needs the other side's sum, M bytes each way, so T ≥ M / min(B⁺(S), B⁻(S)): "
            f"{gbps(b.any_schedule)} GB/s. {difference_text(sb)}."
        )
        formula += (
            f"\nallreduce: T ≥ M / min(B⁺(S), B⁻(S)) = {gbps(b.any_schedule)} GB/s; "
            f"forwarding {gbps(b.forward_only)}, with the switch {gbps(b.capability)}"
        )
        table = (
            ("collective", "switches forward", "with the switch", "any schedule"),
            ("allgather", f"{gbps(ag)} GB/s", f"{gbps(ag)} GB/s", f"{gbps(ag)} GB/s"),
            (
                "allreduce",
                f"{gbps(b.forward_only)} GB/s",
                f"{gbps(b.capability)} GB/s",
                f"{gbps(b.any_schedule)} GB/s",
            ),
        )
    return LectureStep(
        "switch",
        "e",
        "A switch that adds: allreduce, not allgather",
        tuple(paras),
        frozenset({"cut", "labels", "frames"}),
        table=table,
        formula=formula,
    )


# ---------------------------------------------------------------------- the whole lecture
def lecture_steps(plan: LecturePlan) -> list[LectureStep]:
    """Every step of the lecture, in order (see module docstring)."""
    s = plan.schedule
    groups = plan.groups or {nd.id: nd.group for nd in s.topology.nodes}
    boxes = sorted(
        t for t in {group_title(g) for g in groups.values() if g} if t.startswith("box ")
    )
    fabric_title = "The fabric" + (f": {', '.join(boxes)}" if 1 < len(boxes) <= 4 else "")
    steps = [
        LectureStep(
            "fabric",
            "a",
            fabric_title,
            fabric_paragraphs(s.topology),
            frozenset({"labels", "frames"}),
        ),
        LectureStep(
            "cut",
            "b",
            "The bottleneck cut S*",
            cut_paragraphs(s, groups),
            frozenset({"cut", "labels", "frames"}),
            formula=cut_formula_lines(s),
        ),
    ]
    levels = broadcast_levels([("allgather", plan.tree)])
    for level in range(len(levels) + 1):
        title = (
            f"One spanning tree (root {plan.tree.root})"
            if level == 0
            else f"One spanning tree: level {level} of {len(levels)}"
        )
        steps.append(
            LectureStep(
                f"tree{level}",
                "c",
                title,
                tree_paragraphs(s, plan.tree, level, levels),
                frozenset({"cut", "trees", "labels", "frames"}),
                tree_level=level,
            )
        )
    _, _, _, bound = cut_numbers(s)
    table = comparison_table(plan.comparison, bound) if plan.comparison is not None else ()
    steps.append(
        LectureStep(
            "ring",
            "d",
            "The ring beside ForestColl",
            ring_paragraphs(s, plan.comparison, plan.compare_size),
            frozenset({"cut", "heat", "labels", "frames"}),
            table=table,
        )
    )
    if has_reducing_switch(plan):
        steps.append(switch_step(plan))
    return steps


def short_label(node_id: str, group: str | None) -> str:
    """A node's name on a lecture's canvas: without its box prefix (``b0.gpu3`` -> ``gpu3``),
    which the box frame shows already."""
    if group and node_id.startswith(group + ".") and len(node_id) > len(group) + 1:
        return node_id[len(group) + 1 :]
    return node_id


def step_counter(index: int, steps: Sequence[LectureStep]) -> str:
    """``Step 3 of 7 · (b)`` for the panel's header."""
    return f"Step {index + 1} of {len(steps)} · ({steps[index].part})"


def step_html(step: LectureStep, busy: str = "") -> str:
    """The step's body as rich text for the lecture panel (``busy``: a note in italics, e.g.
    that the comparison is still being simulated)."""

    def esc(text: str) -> str:  # "300 GB/s" never breaks across lines on the slide
        text = html.escape(text).replace(" GB/s", "\u00a0GB/s").replace(" × ", "\u00a0×\u00a0")
        return text.replace("/", "\u2060/\u2060").replace("–", "\u2060–\u2060")

    parts = [f"<p>{esc(p)}</p>" for p in step.paragraphs]
    if step.formula:
        lines = "<br>".join(esc(line) for line in step.formula.splitlines())
        parts.append(f"<p style='background:#fff3e0; color:#8a1c1c'><b>{lines}</b></p>")
    if step.table:
        head, *rows = step.table
        cells = "".join(
            f"<th align='left' style='padding:2px 10px 2px 0'>{esc(c)}</th>" for c in head
        )
        body = "".join(
            "<tr>"
            + "".join(f"<td style='padding:2px 10px 2px 0'>{esc(c)}</td>" for c in row)
            + "</tr>"
            for row in rows
        )
        parts.append(
            f"<table cellspacing='0' style='margin-top:10px'><tr>{cells}</tr>{body}</table>"
        )
    if busy:
        parts.append(f"<p style='color:#666'><i>{esc(busy)}</i></p>")
    return "".join(parts)


# ---------------------------------------------------------------------- presets
@dataclass(frozen=True)
class LecturePreset:
    """A fabric the lecture offers first: a template with its values; ``restructure`` lays it
    out by structure (MI250's package pairs and rings) instead of the template's rows."""

    title: str
    template: str
    values: dict
    restructure: bool = False


PRESETS: dict[str, LecturePreset] = {
    "dgx_a100": LecturePreset("2× DGX A100 (NVSwitch boxes, InfiniBand)", "dgx_a100", {"n": 2}),
    "mi250": LecturePreset("2× AMD MI250 (xGMI meshes, InfiniBand)", "mi250", {"n": 2}, True),
}
DEFAULT_PRESET = "dgx_a100"
