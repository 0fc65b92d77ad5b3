"""Every public topology dump under tests/data/real/topo/: GPUs, boxes, links by class, optimum.

    python3 benchmarks/real_fabrics.py [FOLDER]

Each file is imported with the options ``import_options.json`` gives it (skeleton dumps need
``--intra``), the allgather optimum is computed exactly, and the scale-up warning
(:func:`solver.model.scale_up.scale_up_warnings`) is printed under the row when there is one.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

from solver.algorithm.optimum import compute_optimum
from solver.flow.csr import IndexedFabric
from solver.io.formats import load
from solver.model.scale_up import scale_up_warnings

DEFAULT = Path(__file__).resolve().parent.parent / "tests" / "data" / "real" / "topo"
CLASS_ORDER = ("nvlink", "xgmi", "c2c", "intra", "pcie", "sys", "loc", "net")


def corpus(folder: Path) -> list[tuple[Path, dict]]:
    """The dumps of ``folder`` (sorted) with their import options."""
    options_file = folder / "import_options.json"
    options = json.loads(options_file.read_text()) if options_file.exists() else {}
    return [(p, options.get(p.name, {})) for p in sorted(folder.glob("*.xml"))]


def link_classes(topo) -> str:
    counts = Counter(link.extra.get("link_class", "?") for link in topo.links)
    order = [c for c in CLASS_ORDER if c in counts] + sorted(set(counts) - set(CLASS_ORDER))
    return " ".join(f"{c}:{counts[c]}" for c in order)


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else DEFAULT
    rows = []
    for path, opts in corpus(folder):
        topo = load(path, **opts)
        started = time.perf_counter()
        optimum = compute_optimum(IndexedFabric.from_topology(topo))
        elapsed = time.perf_counter() - started
        boxes = len({n.group for n in topo.nodes if n.is_compute})
        rows.append(
            (
                path.name,
                " ".join(f"--{k} {v}" for k, v in opts.items()),
                len(topo.compute_ids),
                boxes,
                topo.extra.get("runtime", ""),
                link_classes(topo),
                f"{float(optimum.algbw):.2f}",
                f"{elapsed:.2f}",
                scale_up_warnings(topo),
            )
        )
    head = ("file", "options", "GPUs", "boxes", "rules", "links by class", "optimum GB/s", "s")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    print(line.format(*head))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line.format(*row[:-1]))
        for w in row[-1]:
            print(f"    warning: {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
