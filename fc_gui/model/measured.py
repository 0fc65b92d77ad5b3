"""Measured versus predicted, without Qt: what the plot's error table and hover read-out say.

A measured line (an nccl-tests/rccl-tests log, or the measured columns of a results file) is
compared with one predicted line of the plot, its *reference*: per measured size, the predicted
algbw at that same size and the error ``(predicted - measured) / measured`` (positive: the model
promises more than the machine did). Only sizes both lines have are compared (the designer's
simulation covers the measured sizes, :func:`simulation_sizes`); nothing is interpolated.

The measured table of a raw log is :meth:`solver.simulate.nccl_tests.Measurement.table`, with
the attributes ``forestcoll measure import`` records (:func:`log_table`); when it is exported with
a schedule, its predicted columns are the bound, as that command writes them (:func:`with_bound`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from fc_gui.model.plot_series import unique_name
from solver.model.errors import ForestCollError
from solver.model.results import ResultTable
from solver.model.schedule import Schedule
from solver.model.units import format_size

#: What the designer calls the library's line (``fc_gui.model.plot_series.library_name``
#: starts with the library's name) and ForestColl's, to pick a measured line's reference.
FORESTCOLL_NAME = "ForestColl"
LIBRARY_PREFIXES = ("nccl", "rccl")


@dataclass(frozen=True)
class ComparisonRow:
    """One measured size: measured and predicted algbw (GB/s; NaN when the reference has no
    point there), the error in %, and the measured figure as % of the bound (NaN: unknown)."""

    size: int
    measured: float
    predicted: float
    error_pct: float
    of_bound_pct: float

    def cells(self) -> tuple[str, str, str, str, str]:
        """The row as the error table writes it."""

        def rate(v: float) -> str:  # GB/s: one decimal from 100 on, else 4 significant digits
            if not math.isfinite(v):
                return "–"
            return f"{v:.1f}" if abs(v) >= 100 else f"{v:.4g}"

        def pct(v: float, fmt: str) -> str:
            return "–" if not math.isfinite(v) else format(v, fmt)

        return (
            format_size(self.size),
            rate(self.measured),
            rate(self.predicted),
            pct(self.error_pct, "+.1f"),
            pct(self.of_bound_pct, ".0f"),
        )


def compare(
    sizes: Sequence[int],
    measured: Sequence[float],
    ref_sizes: Sequence[int] | None,
    ref_algbw: Sequence[float] | None,
    bound_algbw: float | None = None,
) -> list[ComparisonRow]:
    """One :class:`ComparisonRow` per measured point (in the order given).

    ``ref_sizes``/``ref_algbw``: the reference line (None: no reference, predicted NaN);
    ``bound_algbw``: the fabric's optimal algbw for the "% of bound" column (None: unknown).
    """
    ref = {}
    if ref_sizes is not None and ref_algbw is not None:
        ref = {int(s): float(a) for s, a in zip(ref_sizes, ref_algbw)}
    bound = float(bound_algbw) if bound_algbw else math.nan
    rows = []
    for s, m in zip(sizes, measured):
        m = float(m)
        p = ref.get(int(s), math.nan)
        err = 100.0 * (p - m) / m if m > 0 and math.isfinite(p) else math.nan
        of_bound = 100.0 * m / bound if bound > 0 else math.nan
        rows.append(ComparisonRow(int(s), m, p, err, of_bound))
    return rows


def hover_note(reference: str, row: ComparisonRow) -> str:
    """The measured point's note in the hover read-out: the reference's figure and the error."""
    if not math.isfinite(row.predicted):
        return f"{reference}: not simulated at this size" if reference else ""
    return f"{reference} {row.predicted:.1f} GB/s, error {row.error_pct:+.1f} %"


def default_reference(measured_label: str, candidates: Sequence[str]) -> str:
    """The predicted line a measured line is compared with by default: ForestColl's for a
    measured ForestColl schedule, else the library's (nccl-tests measure the library), else
    ForestColl's, else the first candidate ('' when there is none)."""
    library = [c for c in candidates if c.split(" ", 1)[0].lower() in LIBRARY_PREFIXES]
    forestcoll = [c for c in candidates if c == FORESTCOLL_NAME]
    if "forestcoll" in measured_label.lower() and forestcoll:
        return forestcoll[0]
    for group in (library, forestcoll, list(candidates)):
        if group:
            return group[0]
    return ""


def simulation_sizes(
    base: Iterable[int], measured: Iterable[ResultTable], collective: str
) -> list[int]:
    """The sizes to simulate: ``base`` and every measured size of ``collective`` (ascending)."""
    sizes = {int(s) for s in base}
    for table in measured:
        if table.collective != collective:
            continue
        ok = np.isfinite(table.measured_algbw) & (table.size_bytes > 0)
        sizes.update(int(s) for s in table.size_bytes[ok])
    return sorted(sizes)


def log_table(meas, algorithm: str = "measured") -> ResultTable:
    """The measured table of one imported log (:class:`~solver.simulate.nccl_tests.Measurement`)
    with the attributes ``forestcoll measure import`` records."""
    table = meas.table(algorithm=algorithm)
    attrs = dict(table.attrs)
    attrs.update(
        {
            "file": Path(meas.source_file).name,
            "variant": meas.variant,
            "dropped_wrong_sizes": [int(s) for s in meas.wrong_sizes],
            "ranks": int(meas.ranks),
        }
    )
    return replace(table, attrs=attrs)


def check_ranks(meas, compute_nodes: int, path: str | Path) -> str:
    """Refuse a log run on another number of ranks than the fabric's compute nodes (as
    ``measure import`` does); returns a warning when the log names no ranks, else ''."""
    name = Path(path).name
    if meas.ranks and meas.ranks != compute_nodes:
        raise ForestCollError(
            f"{name} ran on {meas.ranks} ranks but the open fabric has {compute_nodes} compute "
            "nodes; open the fabric it ran on first"
        )
    if not meas.ranks:
        return f"{name} lists no '#  Rank' lines; cannot check it ran on {compute_nodes} ranks"
    return ""


def table_name(table: ResultTable, taken: Iterable[str]) -> str:
    """``measured_<collective>_<tool>`` (``measure import``'s name), ``_2``... when taken."""
    stem = f"measured_{table.collective}_{table.source}".replace("-", "_")
    return unique_name(stem, set(taken), sep="_")


def with_bound(table: ResultTable, schedule: Schedule, schedule_name: str) -> ResultTable:
    """``table`` as ``measure import`` stores it next to ``schedule``: when it measures that
    collective and has no predicted figures yet, the predicted columns are the bound
    (size / optimal algbw) and it names the schedule."""
    if table.collective != schedule.collective or np.isfinite(table.predicted_algbw).any():
        return table
    opt = float(schedule.optimal_algbw_exact)
    sizes = table.size_bytes.astype(np.float64)
    attrs = dict(table.attrs)
    attrs["predicted"] = "bound: size / optimal algbw"
    return replace(
        table,
        predicted_time=sizes / (opt * 1e9),
        predicted_algbw=np.full(len(sizes), opt),
        schedule=schedule_name,
        attrs=attrs,
    )


def measured_tables(tables: Mapping[str, ResultTable]) -> dict[str, ResultTable]:
    """The tables of a results file that hold measurements (some finite measured algbw)."""
    return {
        n: t
        for n, t in tables.items()
        if t.source not in ("simulator", "model") and np.isfinite(t.measured_algbw).any()
    }
