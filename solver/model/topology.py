"""The fabric model: compute nodes, switches and links with exact bandwidths.

A :class:`Topology` is an immutable value. Bandwidths (GB/s) and latencies (microseconds) are
:class:`fractions.Fraction` so that decimals such as 12.5 or 3.2 stay exact; the solver scales
them to integers. A link is full duplex (its bandwidth in each direction) unless ``directed``.
Parallel links add up.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

from solver.model.errors import TopologyError
from solver.model.values import (
    MAX_BANDWIDTH,
    MAX_COORDINATE,
    MAX_LATENCY,
    MAX_LINKS,
    MAX_NODES,
    check_count,
    exact_number,
    identifier,
)

COMPUTE = "compute"
SWITCH = "switch"
NODE_KINDS = (COMPUTE, SWITCH)
#: What a switch may do beyond forwarding: add the data it receives (in-switch reduction, as
#: NVLink SHARP / InfiniBand SHARP do) and send what it receives once out on several links
#: (multicast). A switch without capabilities only forwards, the ForestColl model.
REDUCE = "reduce"
MULTICAST = "multicast"
CAPABILITIES = (REDUCE, MULTICAST)
#: An NVSwitch with NVLink SHARP (NVLS): third-generation NVSwitch (H100/H200) and later.
NVLS_CAPABILITIES = frozenset(CAPABILITIES)


def to_fraction(value: Any, what: str) -> Fraction:
    """Convert a number written in a file (int, Decimal, exact str, float) to an exact Fraction.

    Floats are read through their shortest decimal representation (``repr``), so ``12.5`` and
    ``3.2`` become 25/2 and 16/5. Strings may be decimals (``"3.2"``) or ratios (``"1/3"``).
    Raises :class:`TopologyError` naming ``what`` for NaN, infinities, non-numbers and numbers
    too long or too large to convert in bounded time (see :mod:`solver.model.values`).
    """
    return exact_number(value, what)


def fraction_to_json(value: Fraction) -> int | float | str:
    """The JSON value that reads back as exactly ``value`` (int, short float, or "p/q")."""
    if value.denominator == 1:
        return int(value)
    as_float = float(value)
    if Fraction(Decimal(repr(as_float))) == value:
        return as_float
    return f"{value.numerator}/{value.denominator}"


@dataclass(frozen=True)
class Node:
    """A vertex of the fabric: a compute node (GPU, GCD...) or a switch (NVSwitch, NIC, IB...)."""

    id: str
    kind: str
    role: str = ""
    x: float | None = None
    y: float | None = None
    group: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    #: switches only: a subset of :data:`CAPABILITIES` (empty: the switch only forwards)
    capabilities: frozenset[str] = frozenset()

    @property
    def is_compute(self) -> bool:
        return self.kind == COMPUTE

    @property
    def reduces(self) -> bool:
        return REDUCE in self.capabilities

    @property
    def multicasts(self) -> bool:
        return MULTICAST in self.capabilities


@dataclass(frozen=True)
class Link:
    """A physical link. Full duplex (``bandwidth`` each way) unless ``directed``."""

    source: str
    target: str
    bandwidth: Fraction
    latency: Fraction | None = None
    directed: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def label(self) -> str:
        arrow = "->" if self.directed else "<->"
        return f"{self.source}{arrow}{self.target}"


@dataclass(frozen=True)
class Topology:
    """An immutable fabric: named nodes and links (see module docstring)."""

    name: str
    nodes: tuple[Node, ...]
    links: tuple[Link, ...]
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    # ----------------------------------------------------------------- lookups
    @property
    def node_ids(self) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes)

    @property
    def compute_ids(self) -> tuple[str, ...]:
        """Compute node ids in file order (this is the stable rank order)."""
        return tuple(n.id for n in self.nodes if n.kind == COMPUTE)

    @property
    def switch_ids(self) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes if n.kind == SWITCH)

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise TopologyError(f"unknown node {node_id!r}")

    def directed_bandwidths(self) -> dict[tuple[str, str], Fraction]:
        """Bandwidth per directed pair (u, v): full-duplex links count both ways, parallels add.

        Keys are ordered by first appearance, so iteration order is deterministic.
        """
        caps: dict[tuple[str, str], Fraction] = {}
        for link in self.links:
            pairs = [(link.source, link.target)]
            if not link.directed:
                pairs.append((link.target, link.source))
            for pair in pairs:
                old = caps.get(pair)  # one link per pair is the rule: add only parallels
                caps[pair] = link.bandwidth if old is None else old + link.bandwidth
        return caps

    def directed_latencies(self) -> dict[tuple[str, str], Fraction | None]:
        """Latency per directed pair (the smallest latency among parallel links, None if unset)."""
        lat: dict[tuple[str, str], Fraction | None] = {}
        for link in self.links:
            pairs = [(link.source, link.target)]
            if not link.directed:
                pairs.append((link.target, link.source))
            for pair in pairs:
                old = lat.get(pair)
                new = link.latency
                if pair not in lat:
                    lat[pair] = new
                elif new is not None and (old is None or new < old):
                    lat[pair] = new
        return lat

    def to_networkx(self):
        """A ``networkx.DiGraph``: node attrs ``kind``/``role``, edge attr ``bandwidth`` (Fraction)."""
        import networkx as nx

        g = nx.DiGraph(name=self.name)
        for n in self.nodes:
            g.add_node(n.id, kind=n.kind, role=n.role)
        for (u, v), bw in self.directed_bandwidths().items():
            g.add_edge(u, v, bandwidth=bw)
        return g

    def reversed(self) -> Topology:
        """The same fabric with every directed link reversed (for reduce-scatter)."""
        links = tuple(
            replace(link, source=link.target, target=link.source) if link.directed else link
            for link in self.links
        )
        return replace(self, links=links)

    def without(self, node_ids: Iterable[str] = (), link_indices: Iterable[int] = ()) -> Topology:
        """A copy with some nodes (and their links) and some links (by index) removed."""
        drop_nodes = set(node_ids)
        drop_links = set(link_indices)
        nodes = tuple(n for n in self.nodes if n.id not in drop_nodes)
        links = tuple(
            link
            for i, link in enumerate(self.links)
            if i not in drop_links
            and link.source not in drop_nodes
            and link.target not in drop_nodes
        )
        return replace(self, nodes=nodes, links=links)


# --------------------------------------------------------------------- validation
def validate_read(topo: Topology, where: str) -> Topology:
    """:func:`validate` for a fabric read from ``where`` (a file name): the error starts with it."""
    try:
        return validate(topo)
    except TopologyError as exc:
        raise TopologyError(f"{where}: {exc}") from None


def validate(topo: Topology, *, check_connectivity: bool = True) -> Topology:
    """Check a topology and return it unchanged; raise :class:`TopologyError` naming the problem.

    Checks: at most ``MAX_NODES`` nodes and ``MAX_LINKS`` links, non-empty unique node ids
    without control characters, known kinds, finite coordinates within ``MAX_COORDINATE``, links
    between known distinct nodes, bandwidth in (0, ``MAX_BANDWIDTH``], latency in [0,
    ``MAX_LATENCY``], at least two compute nodes, and (unless ``check_connectivity`` is False)
    every compute node reaches and is reached from every other. (Limits: :mod:`solver.model.values`.)
    """
    global _LAST_VALID
    last = _LAST_VALID
    if last is not None and last[0]() is topo and (last[1] or not check_connectivity):
        return topo  # this very (immutable) object passed already: loading, then solving
    check_count(len(topo.nodes), MAX_NODES, "number of nodes")
    check_count(len(topo.links), MAX_LINKS, "number of links")
    seen: set[str] = set()
    for n in topo.nodes:
        identifier(n.id, "node id")
        for axis in ("x", "y"):
            value = getattr(n, axis)
            if value is not None and not (
                isinstance(value, int | float) and abs(value) <= MAX_COORDINATE
            ):
                raise TopologyError(
                    f"node {n.id!r}: {axis} must be a number between -{MAX_COORDINATE:g} and "
                    f"{MAX_COORDINATE:g}"
                )
        if n.id in seen:
            raise TopologyError(f"duplicate node id {n.id!r}")
        seen.add(n.id)
        if n.kind not in NODE_KINDS:
            raise TopologyError(
                f"node {n.id!r}: kind must be 'compute' or 'switch', got {n.kind!r}"
            )
        if n.capabilities:
            unknown = sorted(set(n.capabilities) - set(CAPABILITIES))
            if unknown:
                raise TopologyError(
                    f"node {n.id!r}: unknown capability {unknown[0]!r} (one of "
                    f"{', '.join(CAPABILITIES)})"
                )
            if n.kind != SWITCH:
                raise TopologyError(
                    f"node {n.id!r}: only a switch may reduce or multicast, this is a compute node"
                )
    for i, link in enumerate(topo.links):
        where = f"link {i} ({link.label})"
        for end in (link.source, link.target):
            if end not in seen:
                raise TopologyError(f"{where}: unknown node {end!r}")
        if link.source == link.target:
            raise TopologyError(f"{where}: self-loop on node {link.source!r}")
        if not isinstance(link.bandwidth, Fraction):
            raise TopologyError(f"{where}: bandwidth must be an exact number")
        if link.bandwidth <= 0:
            raise TopologyError(f"{where}: bandwidth must be > 0, got {_approx(link.bandwidth)}")
        if link.bandwidth > MAX_BANDWIDTH:
            raise TopologyError(
                f"{where}: bandwidth must be at most {float(MAX_BANDWIDTH):g} GB/s, got "
                f"{_approx(link.bandwidth)}"
            )
        if link.latency is not None and link.latency < 0:
            raise TopologyError(f"{where}: latency must be >= 0, got {_approx(link.latency)}")
        if link.latency is not None and link.latency > MAX_LATENCY:
            raise TopologyError(
                f"{where}: latency must be at most {float(MAX_LATENCY):g} us, got "
                f"{_approx(link.latency)}"
            )
    compute = topo.compute_ids
    if len(compute) < 2:
        raise TopologyError(
            f"a fabric needs at least two compute nodes, this one has {len(compute)}"
        )
    if check_connectivity:
        _check_connectivity(topo, compute)
    if isinstance(topo.nodes, tuple) and isinstance(topo.links, tuple):  # nothing can change
        _LAST_VALID = (weakref.ref(topo), check_connectivity)
    return topo


#: the last topology :func:`validate` passed (a weak reference) and whether connectivity was
#: checked: a Topology is immutable, so the same object need not be checked twice (a 32 768-GPU
#: Clos is checked in about 1.3 s when loaded, and ``solve`` validates its input again)
_LAST_VALID: tuple[weakref.ref, bool] | None = None


def _approx(value: Fraction) -> str:
    """A short decimal for a message (never overflows a float)."""
    try:
        return f"{float(value):g}"
    except OverflowError:
        return "a number beyond 1e308"


def _check_connectivity(topo: Topology, compute: tuple[str, ...]) -> None:
    out: dict[str, list[str]] = {n.id: [] for n in topo.nodes}
    inn: dict[str, list[str]] = {n.id: [] for n in topo.nodes}
    for link in topo.links:  # parallel links only repeat a neighbour: harmless here
        out[link.source].append(link.target)
        inn[link.target].append(link.source)
        if not link.directed:
            out[link.target].append(link.source)
            inn[link.source].append(link.target)

    def reach(start: str, adj: dict[str, list[str]]) -> set[str]:
        seen = {start}
        stack = [start]
        while stack:
            for w in adj[stack.pop()]:
                if w not in seen:
                    seen.add(w)
                    stack.append(w)
        return seen

    first = compute[0]
    fwd = reach(first, out)
    bwd = reach(first, inn)
    for c in compute[1:]:
        if c not in fwd:
            raise TopologyError(f"compute node {c!r} cannot be reached from compute node {first!r}")
        if c not in bwd:
            raise TopologyError(f"compute node {c!r} cannot reach compute node {first!r}")
