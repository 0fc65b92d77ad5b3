"""Study rows in the HDF5 results file: ``/studies/<name>`` (added in schema 1.1).

Layout::

    /studies/<name>        attrs study ("failures" | "upgrade" | "sweep"), collective, one
                           attribute per study parameter (elements, factor, add, by, template,
                           ...), parameters_json (all of them), base_algbw (+ _exact; units in
                           algbw_units = "GB/s"), symmetry, orbits, rows_total, rows, complete,
                           created, modified
      <column>             one 1-D dataset per column (the study's columns), all of length
                           ``rows``; attrs ``column_type`` (str, links, float, int, bool) and
                           ``units`` where the column has units; strings UTF-8; a ``links``
                           column holds space-separated "u->v" pairs

Rows are appended one batch at a time, each batch in one atomic rewrite of the file
(:func:`solver.io.hdf5.results` writes to a copy and renames it), so an interrupted study keeps
every finished batch and ``--resume`` computes only the missing rows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import h5py
import numpy as np

from solver.io.hdf5.toolkit import (
    STR,
    ResultsFileError,
    attr_str,
    check_name,
    modify,
    now,
    reading,
    strings,
)
from solver.io.untrusted import json_value, parse_json
from solver.model.topology import Topology

_DTYPES = {"str": STR, "links": STR, "float": np.float64, "int": np.int64, "bool": np.bool_}


@dataclass(frozen=True)
class StoredStudy:
    """A study read back from a results file."""

    name: str
    attrs: Mapping[str, Any]
    parameters: Mapping[str, Any]
    rows: list[dict[str, Any]]

    @property
    def study(self) -> str:
        return str(self.attrs.get("study", ""))

    @property
    def complete(self) -> bool:
        return bool(self.attrs.get("complete", False))


def _encode(kind: str, values: list) -> np.ndarray:
    if kind == "links":
        return np.array([" ".join(v) for v in values], dtype=object)
    if kind == "str":
        return np.array([str(v) for v in values], dtype=object)
    return np.asarray(values, dtype=_DTYPES[kind])


def _decode(kind: str, ds) -> list:
    if kind == "links":
        return [s.split() for s in strings(ds)]
    if kind == "str":
        return strings(ds)
    if kind == "bool":
        return [bool(x) for x in ds[()]]
    if kind == "int":
        return [int(x) for x in ds[()]]
    return [float(x) for x in ds[()]]


def _attr_value(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def write_study_rows(
    path: str | os.PathLike,
    topology: Topology | None,
    name: str,
    attrs: Mapping[str, Any],
    columns: Sequence[tuple[str, str, str]],
    rows: Sequence[Mapping[str, Any]],
    *,
    complete: bool,
    fresh: bool = False,
) -> None:
    """Append ``rows`` to ``/studies/<name>`` (created if missing) in one atomic write.

    ``attrs`` (study, collective, parameters, base...) are (re)written each time. ``fresh``
    replaces a study of that name. ``topology`` is the fabric the file must hold (None: any;
    a new file needs one).
    """
    name = check_name(name)

    def edit(f: h5py.File) -> None:
        sg = f.require_group("studies")
        if fresh and name in sg:
            del sg[name]
        g = sg.require_group(name)
        if "created" not in g.attrs:
            g.attrs["created"] = now()
        g.attrs["modified"] = now()
        for key, value in attrs.items():
            g.attrs[key] = _attr_value(value)
        count = int(g.attrs.get("rows", 0))
        for col, kind, units in columns:
            values = [row.get(col, _missing(kind)) for row in rows]
            data = _encode(kind, values)
            if col not in g:
                ds = g.create_dataset(
                    col, shape=(count,), maxshape=(None,), dtype=_DTYPES[kind], chunks=(256,)
                )
                ds.attrs["column_type"] = kind
                if units:
                    ds.attrs["units"] = units
            ds = g[col]
            if ds.shape[0] != count:
                raise ResultsFileError(
                    f"study {name!r}: column {col!r} has {ds.shape[0]} rows, not {count}"
                )
            ds.resize((count + len(rows),))
            if rows:
                ds[count:] = data
        g.attrs["rows"] = count + len(rows)
        g.attrs["complete"] = bool(complete)

    modify(path, topology, edit)


def _missing(kind: str) -> Any:
    return {"str": "", "links": [], "float": float("nan"), "int": 0, "bool": False}[kind]


def list_studies(path: str | os.PathLike) -> list[str]:
    """Names of the studies in a results file."""
    with reading(path) as f:
        return list(f["studies"]) if "studies" in f else []


def has_study(path: str | os.PathLike, name: str) -> bool:
    """True when ``path`` exists and holds ``/studies/<name>``."""
    if not os.path.exists(path):
        return False
    return name in list_studies(path)


def read_study(path: str | os.PathLike, name: str) -> StoredStudy:
    """Read ``/studies/<name>``: every column, decoded by its ``column_type`` attribute."""
    with reading(path) as f:
        sg = f.get("studies")
        if sg is None or name not in sg:
            have = ", ".join(sg) if sg is not None else ""
            raise ResultsFileError(f"{path}: no study {name!r} (it has: {have or 'none'})")
        g = sg[name]
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in g.attrs.items()}
        attrs = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in attrs.items()}
        what = f"{g.name} parameters_json"
        parameters = json_value(
            parse_json(attr_str(g, "parameters_json", "{}") or "{}", what, error=ResultsFileError),
            what,
            ResultsFileError,
        )
        if not isinstance(parameters, dict):
            raise ResultsFileError(f"{g.name}: parameters_json must hold a JSON object")
        count = int(g.attrs.get("rows", 0))
        data = {col: _decode(attr_str(g[col], "column_type", "str"), g[col]) for col in g}
        rows = [{col: values[i] for col, values in data.items()} for i in range(count)]
        if attrs.get("study") == "sweep":
            for row in rows:
                row["params"] = {
                    p: row.get(f"param_{p}") for p in parameters.get("param_names", ())
                }
        return StoredStudy(name, attrs, parameters, rows)
