"""The sample fabrics' documentation matches the files: the manual's count (docs/formats.md), and in
sample_topologies/README.md one row per file with its true sizes and optimum, and only paths
that exist."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import solver
from solver.io.formats import load

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_topologies"


def _rows() -> dict[str, list[str]]:
    text = (SAMPLES / "README.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\| `([\w.]+\.json)` \|(.*)\|$", line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    return rows


def test_readme_counts_the_samples():
    files = sorted(p.name for p in SAMPLES.glob("*.json"))
    readme = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    m = re.search(r"`sample_topologies/` holds (\d+) fabrics", readme)
    assert m and int(m.group(1)) == len(files)
    assert sorted(_rows()) == files


def test_sample_table_paths_exist():
    text = (SAMPLES / "README.md").read_text(encoding="utf-8")
    for path in re.findall(r"((?:tests|solver|sample_topologies)/[\w/.]+\.\w+)", text):
        assert (ROOT / path).exists(), path


def test_sample_table_sizes_and_optima_are_the_files():
    for name, cells in _rows().items():
        topo = load(SAMPLES / name)
        n, switches, links, optimum = cells[1:5]
        assert (int(n), int(switches), int(links)) == (
            len(topo.compute_ids),
            len(topo.switch_ids),
            len(topo.links),
        ), name
        exact = re.search(r"= (\d+)/(\d+)", optimum)
        want = Fraction(int(exact[1]), int(exact[2])) if exact else Fraction(optimum.split()[0])
        assert solver.solve(topo).optimal_algbw_exact == want, name
