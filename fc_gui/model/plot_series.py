"""What the plot shows, without Qt: short series names, and the plotted data as one CSV table.

Names are what a legend can hold: ``ForestColl``, ``ring``, ``tree``, ``nccl (ring)`` (the
library's pick at the largest size), ``measured allreduce``, never a table's storage name. A
name already on the plot gets `` 2``, `` 3``... (:func:`unique_name`).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from solver.model.results import ResultTable
from solver.model.units import format_size

#: Display names of the simulated algorithms (``solver.simulate.ALGORITHMS``).
ALGORITHM_NAMES = {
    "forestcoll": "ForestColl",
    "forestcoll-nvls": "ForestColl + NVLS",
    "ring": "ring",
    "ring1": "one ring",
    "tree": "tree",
    "direct": "direct",
    "blink": "Blink",
}
#: The library tuner's algorithms (solver/simulate/library.py ALGOS) as the legend writes them.
LIBRARY_ALGORITHMS = {
    "Ring": "ring",
    "Tree": "tree",
    "NVLS": "NVLS",
    "NVLSTree": "NVLS tree",
    "PAT": "PAT",
    "CollNet": "CollNet",
}
#: Labels the measure importer gives when nothing more specific is known.
GENERIC_MEASURED = ("", "measured")


@dataclass(frozen=True)
class Series:
    """One plotted line: its name, x (bytes) and y (algbw, GB/s), and per-point notes."""

    name: str
    size_bytes: np.ndarray
    algbw: np.ndarray
    kind: str  # "model", "simulated", "measured"
    notes: tuple[str, ...] = ()  # per point (e.g. the library's algorithm/protocol), or ()


def library_name(table: ResultTable) -> str:
    """``nccl (ring)``: the library and the algorithm it picks for the largest size."""
    attrs = table.attrs or {}
    lib = str(attrs.get("library") or table.algorithm or "nccl")
    choices = [str(c) for c in attrs.get("choice", ()) if c]
    if not choices or len(choices) != len(table.size_bytes):
        return lib
    largest = choices[int(np.argmax(table.size_bytes))]
    algo = largest.split("/", 1)[0]
    return f"{lib} ({LIBRARY_ALGORITHMS.get(algo, algo)})"


def base_name(table: ResultTable, measured: bool) -> str:
    """The short name of ``table`` on the plot (before :func:`unique_name`)."""
    if measured:
        label = table.algorithm.strip()
        if label.lower() in GENERIC_MEASURED:
            return f"measured {table.collective}".strip()
        return f"measured {label}"
    if table.algorithm == "nccl" or "library" in (table.attrs or {}):
        return library_name(table)
    return ALGORITHM_NAMES.get(table.algorithm, table.algorithm or "simulated")


#: Legend order of simulated lines: ForestColl, the library, then the baselines.
ALGORITHM_ORDER = (
    "forestcoll",
    "forestcoll-nvls",
    "nccl",
    "ring",
    "ring1",
    "tree",
    "direct",
    "blink",
)


def ordered(tables: Mapping[str, ResultTable]) -> dict[str, ResultTable]:
    """``tables`` in legend order (:data:`ALGORITHM_ORDER`; others after, as given)."""
    rank = {name: i for i, name in enumerate(ALGORITHM_ORDER)}
    return dict(sorted(tables.items(), key=lambda kv: rank.get(kv[1].algorithm, len(rank))))


def unique_name(name: str, taken, sep: str = " ") -> str:
    """``name``, or ``name 2``, ``name 3``... (``sep`` between) when it is already in ``taken``."""
    if name not in taken:
        return name
    i = 2
    while f"{name}{sep}{i}" in taken:
        i += 1
    return f"{name}{sep}{i}"


def table_series(table: ResultTable, simulated_only: bool = False) -> Series | None:
    """The line of one results table: measured columns if any, else the simulator's prediction
    (None for a model table, a table with no usable point, or measured data when
    ``simulated_only``)."""
    measured = np.isfinite(table.measured_algbw)
    if measured.any() and not simulated_only:
        x, y, kind = table.size_bytes[measured], table.measured_algbw[measured], "measured"
    elif table.source == "simulator":
        x, y, kind = table.size_bytes, table.predicted_algbw, "simulated"
        measured = np.ones(len(x), bool)
    else:
        return None
    ok = (x > 0) & np.isfinite(y)
    if not ok.any():
        return None
    choices = list((table.attrs or {}).get("choice", ()))
    notes: tuple[str, ...] = ()
    if kind == "simulated" and len(choices) == len(table.size_bytes):
        notes = tuple(str(c) for c, keep in zip(choices, ok) if keep)
    return Series(
        base_name(table, kind == "measured"),
        np.asarray(x[ok], np.int64),
        np.asarray(y[ok], np.float64),
        kind,
        notes,
    )


def in_switch_note(tables: Mapping[str, ResultTable]) -> str:
    """The library table's "in-switch reduction beats the bound" sentence, or ''."""
    for table in tables.values():
        note = (table.attrs or {}).get("in_switch_note")
        if isinstance(note, str) and note:
            return note
    return ""


def csv_text(series: Sequence[Series]) -> str:
    """One row per message size (the union of all series' sizes, ascending), one column per
    series; the header names the units; a size a series has no point at is an empty cell."""
    sizes = sorted({int(s) for line in series for s in line.size_bytes})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["size (bytes)", "size"] + [f"{line.name} algbw (GB/s)" for line in series])
    columns = [dict(zip(map(int, line.size_bytes), map(float, line.algbw))) for line in series]
    for size in sizes:
        cells = []
        for col in columns:
            v = col.get(size)
            cells.append("" if v is None or math.isnan(v) else f"{v:.6g}")
        writer.writerow([size, format_size(size)] + cells)
    return out.getvalue()
