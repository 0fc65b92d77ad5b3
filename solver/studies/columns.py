"""The columns of a study's rows: name, type and units (shared by the HDF5 file and the GUI).

Types: ``"str"``, ``"float"``, ``"int"``, ``"bool"`` and ``"links"`` (a list of "u->v" strings,
stored as one space-separated string). Sweep parameters become columns ``param_<name>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from solver.studies.tasks import FAILURES, SWEEP, UPGRADE

Column = tuple[str, str, str]  # name, type, units ("" = none)

_OPTIMUM: tuple[Column, ...] = (
    ("algbw", "float", "GB/s"),
    ("algbw_exact", "str", "GB/s"),
    ("change", "float", "GB/s"),
    ("change_pct", "float", "%"),
    ("connected", "bool", ""),
    ("cut_compute", "int", ""),
    ("cut_bandwidth", "float", "GB/s"),
    ("cut_links", "links", ""),
)

_BY_STUDY: dict[str, tuple[Column, ...]] = {
    FAILURES: (("element", "str", ""), ("kind", "str", ""), ("orbit", "str", "")) + _OPTIMUM,
    UPGRADE: (
        ("element", "str", ""),
        ("kind", "str", ""),
        ("orbit", "str", ""),
        ("links", "int", ""),
    )
    + _OPTIMUM
    + (("on_bottleneck", "bool", ""), ("blocked", "bool", ""), ("headroom", "float", "GB/s")),
    SWEEP: (("point", "str", ""), ("kind", "str", ""))
    + _OPTIMUM
    + (
        ("k", "int", ""),
        ("height_max", "int", ""),
        ("height_mean", "float", ""),
        ("compute_nodes", "int", ""),
        ("solve_time", "float", "s"),
        ("error", "str", ""),
    ),
}


def param_units(name: str) -> str:
    """Units of a sweep parameter: GB/s for bandwidths, none for counts."""
    return "GB/s" if "bw" in name or "bandwidth" in name else ""


def columns(study: str, params: Sequence[str] = ()) -> tuple[Column, ...]:
    """The columns of ``study`` (a sweep adds one per parameter name)."""
    cols = _BY_STUDY[study]
    if study == SWEEP:
        cols = cols[:2] + tuple((f"param_{p}", "float", param_units(p)) for p in params) + cols[2:]
    return cols


def row_key(row: Mapping) -> str:
    """The key of a row: its element, or its sweep point."""
    return str(row["element"] if "element" in row else row["point"])
