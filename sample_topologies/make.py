"""Regenerate the sample fabrics and the table in README.md: ``python sample_topologies/make.py``.

The fabrics come from :data:`solver.io.templates.SAMPLES`. The optimum column is computed here
independently of the solver (exact Dinkelbach iterations on networkx min cuts), so the table
doubles as a cross-check of ``forestcoll solve``.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from math import lcm
from pathlib import Path

import networkx as nx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the repository's solver package, not an installed copy

from solver.io.formats import load, save  # noqa: E402  (after the sys.path line)
from solver.io.templates import SAMPLES, write_samples  # noqa: E402

# Optima that ALGORITHM.md states (published ForestColl figures), GB/s.
PUBLISHED = {
    "dgx_a100_1x.json": Fraction(2400, 7),
    "dgx_a100_2x.json": Fraction(1040, 3),
    "dgx_a100_4x.json": Fraction(800, 3),
    "mi250_1x.json": Fraction(2400, 7),
    "mi250_2x.json": Fraction(5312, 15),
}


def optimum_algbw(topo) -> Fraction:
    """N * min_S B+(S)/|S ∩ Vc| by Dinkelbach iterations (exact, integers scaled)."""
    caps = topo.directed_bandwidths()
    scale = lcm(*(c.denominator for c in caps.values()))
    icap = {e: int(c * scale) for e, c in caps.items()}
    compute = topo.compute_ids
    n = len(compute)

    def ratio(side: set) -> Fraction:
        leaving = sum(c for (u, v), c in icap.items() if u in side and v not in side)
        return Fraction(sum(1 for c in compute if c in side), leaving)

    rho = ratio(set(topo.node_ids) - {compute[0]})
    while True:
        p, q = rho.numerator, rho.denominator
        g = nx.DiGraph()
        for (u, v), c in icap.items():
            g.add_edge(u, v, capacity=p * c)
        for c in compute:
            g.add_edge("__source__", c, capacity=q)
        best, best_side = 0, None
        for t in compute:
            value, (side, _) = nx.minimum_cut(g, "__source__", t)
            if q * n - value > best:
                best, best_side = q * n - value, set(side) - {"__source__"}
        if best_side is None:
            return n / (rho * scale)
        rho = ratio(best_side)


# Fabrics imported from the NCCL dump in tests/data: file name -> (boxes, fabric, description).
NCCL_DUMP = HERE.parent / "tests" / "data" / "dgx_a100_nccl_topo.xml"
IMPORTED = {
    "dgx_a100_nccl_2x.json": (
        2,
        "ib",
        "2 boxes imported from an NCCL topology dump (PCIe switches, CPUs, NICs on one IB switch)",
    ),
}


def write_imported() -> None:
    for file_name, (boxes, fabric, _) in IMPORTED.items():
        save(load(NCCL_DUMP, boxes=boxes, fabric=fabric), HERE / file_name)


def main() -> None:
    write_samples(HERE)
    write_imported()
    rows = [
        "| file | what it is | N | switches | links | optimum algbw (GB/s) |",
        "|---|---|---|---|---|---|",
    ]
    described = {name: spec[2] for name, spec in SAMPLES.items()}
    described.update({name: spec[2] for name, spec in IMPORTED.items()})
    for file_name, description in described.items():
        topo = load(HERE / file_name)
        algbw = optimum_algbw(topo)
        published = PUBLISHED.get(file_name)
        if published is not None and published != algbw:
            raise SystemExit(f"{file_name}: optimum {algbw} differs from ALGORITHM.md {published}")
        exact = "" if algbw.denominator == 1 else f" (= {algbw.numerator}/{algbw.denominator})"
        mark = " *" if published is not None else ""
        rows.append(
            f"| `{file_name}` | {description} | {len(topo.compute_ids)} | {len(topo.switch_ids)} "
            f"| {len(topo.links)} | {float(algbw):.3f}{exact}{mark} |"
        )
    text = (
        "# Sample fabrics\n\n"
        "Topology files (format v1) made from the templates in `solver/io/templates.py` (and one "
        "imported with `forestcoll convert tests/data/dgx_a100_nccl_topo.xml "
        "sample_topologies/dgx_a100_nccl_2x.json --boxes 2 --fabric ib`); regenerate "
        "them and this table with `python sample_topologies/make.py`. N = compute nodes; links = "
        "physical (full-duplex) links. The optimum is the allgather/reduce-scatter algbw bound "
        "N·min_S B⁺(S)/|S∩Vc|, computed exactly by the script; `*` marks figures that "
        "ALGORITHM.md also gives (the published ForestColl results), which the script checks.\n\n"
        + "\n".join(rows)
        + "\n\nTry one: `forestcoll info sample_topologies/dgx_a100_2x.json`.\n"
    )
    (HERE / "README.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(
        prog="python sample_topologies/make.py",
        description="Regenerate the sample fabric files from the templates and the table of their "
        "exact optima in sample_topologies/README.md (overwrites both). Takes no options.",
        epilog="example:\n  python sample_topologies/make.py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    ).parse_args()
    main()
