"""The HDF5 results file: one fabric, many schedules and predicted-vs-measured tables.

Layout (schema ``forestcoll-results``, version 1.2; 1.1 added ``/studies``, 1.2 ``/plans``)::

    /                      attrs schema, schema_version, creator, creator_version, created, modified
    /topology              attrs name, extra_json
      nodes/               id, kind, role (UTF-8 strings), x, y (float64, NaN = unset),
                           group (string), has_group (bool), extra_json (string),
                           capabilities ("reduce,multicast"; only when a switch has some)
      links/               source, target (int32 node indices), bandwidth (float64, units GB/s),
                           bandwidth_exact ("p/q" strings), latency (float64, units us, NaN = unset),
                           latency_exact ("" = unset), directed (bool), extra_json
    /schedules/<name>      attrs collective, k, max_trees_per_root (0 = no limit), optimal_algbw,
                           optimal_algbw_exact, algbw, algbw_exact, algbw_units = "GB/s",
                           phase_topology ("same" | "reversed")
      trees/               CSR: root, multiplicity, weight (+ weight_exact), edge_offsets,
                           edge_src, edge_dst, path_offsets, path_nodes (node indices)
      bottleneck/          attrs compute_nodes_inside, egress_bandwidth (+ _exact, units GB/s);
                           nodes, link_source, link_target, link_bandwidth (+ _exact)
      link_load/           source, target, bandwidth (+ _exact), load (+ load_exact)
      warnings             strings
      timings              group whose attributes are phase -> seconds (attr units = "s")
      phases/0, phases/1   allreduce: the reduce-scatter and allgather schedules, same layout
    /results/<name>        size_bytes (units B), predicted_time, measured_time (units s),
                           predicted_algbw, measured_algbw (units GB/s); attrs collective,
                           algorithm, source, schedule, attrs_json
    /studies/<name>        design-study rows, one dataset per column (:mod:`solver.io.hdf5.studies`)
    /plans/<name>          compressed plans: representative trees + generator
                           (:mod:`solver.io.hdf5.plans`)
    /provenance            attrs program, program_version, python, numpy, numba, networkx, h5py;
      <schedule name>      attrs options_json, timings_json, written

Every write builds the new file in memory and writes it with
:func:`solver.io.files.atomic_write_bytes` (temporary file, then rename), so a failed write or a
full disk never damages what was there. Reading first audits the file's structure
(:mod:`solver.io.hdf5.audit`: no external storage, virtual datasets, external or soft links, no
forged sizes) and then checks every dataset's shape, dtype and index range.
Datasets larger than :data:`solver.io.hdf5.toolkit.COMPRESS_MIN` elements are gzip + shuffle compressed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any

import h5py
import numpy as np

from solver.io.hdf5.toolkit import (
    SCHEMA,
    ResultsFileError,
    attr_int,
    attr_str,
    check_name,
    check_refs,
    dataset,
    frac,
    json_object,
    modify,
    now,
    numbers,
    parse_frac,
    program_version,
    read_schedule_group,
    read_topology_group,
    reading,
    write_schedule_group,
)
from solver.model.results import ResultTable
from solver.model.schedule import Schedule
from solver.model.topology import Topology
from solver.model.units import format_size
from solver.model.values import printable


# ----------------------------------------------------------------------------- results tables
def _write_table(g: h5py.Group, table: ResultTable) -> None:
    g.attrs["collective"] = table.collective
    g.attrs["algorithm"] = table.algorithm
    g.attrs["source"] = table.source
    g.attrs["schedule"] = table.schedule
    try:
        g.attrs["attrs_json"] = (
            json.dumps(dict(table.attrs), sort_keys=True, default=_numpy_json)
            if table.attrs
            else ""
        )
    except (TypeError, ValueError):
        raise ResultsFileError(
            f"result table attrs must be JSON values: {dict(table.attrs)!r}"
        ) from None
    dataset(g, "size_bytes", table.size_bytes, np.int64, "B")
    dataset(g, "predicted_time", table.predicted_time, np.float64, "s")
    dataset(g, "predicted_algbw", table.predicted_algbw, np.float64, "GB/s")
    dataset(g, "measured_time", table.measured_time, np.float64, "s")
    dataset(g, "measured_algbw", table.measured_algbw, np.float64, "GB/s")


def _numpy_json(value: Any) -> Any:
    """numpy scalars and arrays in table attrs become plain JSON values."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _read_table(g: h5py.Group) -> ResultTable:
    attrs_json = attr_str(g, "attrs_json", "")
    sizes = numbers(g["size_bytes"], "iuf", None)
    m = len(sizes)
    if m and (not np.all(np.isfinite(sizes)) or sizes.min() < 0 or sizes.max() > 2.0**62):
        raise ResultsFileError(f"{g.name}/size_bytes must be between 0 and 2**62 bytes")
    columns = {}
    for column in ("predicted_time", "predicted_algbw", "measured_time", "measured_algbw"):
        values = numbers(g[column], "iuf", m).astype(np.float64)
        if np.any(values < 0) or np.any(np.isinf(values)):
            raise ResultsFileError(f"{g.name}/{column} must be >= 0 (NaN = not measured)")
        columns[column] = values
    return ResultTable(
        collective=attr_str(g, "collective"),
        algorithm=attr_str(g, "algorithm"),
        source=attr_str(g, "source"),
        size_bytes=sizes.astype(np.int64),
        schedule=attr_str(g, "schedule"),
        attrs=json_object(attrs_json, f"{g.name} attrs_json"),
        **columns,
    )


# ----------------------------------------------------------------------------- file-level writes
def default_name(schedule: Schedule) -> str:
    """``allgather`` or ``allgather_k1`` (with ``max_trees_per_root``)."""
    name = schedule.collective
    if schedule.max_trees_per_root:
        name += f"_k{schedule.max_trees_per_root}"
    return name


def write_schedule(
    path: str | os.PathLike,
    schedule: Schedule,
    name: str | None = None,
    tables: Callable[[Schedule, str], Mapping[str, ResultTable]] | None = None,
) -> str:
    """Store ``schedule`` in the results file ``path`` (created if missing).

    Parameters
    ----------
    path : str or os.PathLike
        The results file; updated on a copy renamed over it, so a failure leaves it as it was.
    schedule : Schedule
        The schedule to store, under ``/schedules/<name>``; one of the same name is replaced.
    name : str, optional
        Its name; None: :func:`default_name` (``allgather``, ``allgather_k1``, ...).
    tables : callable(schedule, name) -> mapping of str to ResultTable, optional
        Predicted tables to store with it under ``/results`` (e.g.
        :func:`solver.simulate.estimate.model_tables`: this module stores tables, it does not
        compute them).

    Returns
    -------
    str
        The name the schedule was stored under.

    Raises
    ------
    ResultsFileError
        A file that holds another fabric, a bad name, a damaged file or one that cannot be
        written (one line naming the file).

    Examples
    --------
    >>> import os, tempfile
    >>> from solver import solve
    >>> from solver.io.templates import ring
    >>> from solver.io.hdf5.results import read_schedules, write_schedule
    >>> path = os.path.join(tempfile.mkdtemp(), "ring.h5")
    >>> write_schedule(path, solve(ring(4)))
    'allgather'
    >>> list(read_schedules(path))
    ['allgather']
    """
    name = check_name(name or default_name(schedule))
    topo = schedule.topology
    index = {n.id: i for i, n in enumerate(topo.nodes)}
    for part in (schedule, *schedule.phases):
        check_refs(part, index)
    tables = dict(tables(schedule, name)) if tables is not None else {}

    def edit(f: h5py.File) -> None:
        sg = f.require_group("schedules")
        if name in sg:
            del sg[name]
        write_schedule_group(sg.create_group(name), schedule, topo)
        rg = f.require_group("results")
        for tname, table in tables.items():
            if tname in rg:
                del rg[tname]
            _write_table(rg.create_group(tname), table)
        pg = f.require_group("provenance")
        if name in pg:
            del pg[name]
        p = pg.create_group(name)
        p.attrs["options_json"] = json.dumps(
            {"collective": schedule.collective, "max_trees_per_root": schedule.max_trees_per_root}
        )
        p.attrs["timings_json"] = json.dumps(
            {k: float(v) for k, v in dict(schedule.timings).items()}
        )
        p.attrs["program_version"] = program_version()
        p.attrs["written"] = now()

    modify(path, topo, edit)
    return name


def write_results(path: str | os.PathLike, name: str, table: ResultTable) -> None:
    """Store (or replace) the table ``/results/<name>`` of an existing results file.

    Parameters
    ----------
    path : str or os.PathLike
        An existing results file (:func:`write_schedule` creates one).
    name : str
        The table's name.
    table : ResultTable
        The table to store.

    Raises
    ------
    ResultsFileError
        A missing or damaged file, a bad name, a ``table`` that is no :class:`ResultTable`, or a
        file that cannot be written; the file is left as it was.
    """
    name = check_name(name)
    if not isinstance(table, ResultTable):
        raise ResultsFileError(f"write_results needs a ResultTable, got {type(table).__name__}")

    def edit(f: h5py.File) -> None:
        rg = f.require_group("results")
        if name in rg:
            del rg[name]
        _write_table(rg.create_group(name), table)

    modify(path, None, edit)


# ----------------------------------------------------------------------------- reads
def read_topology(path: str | os.PathLike) -> Topology:
    """The fabric a results file holds.

    Parameters
    ----------
    path : str or os.PathLike
        A results file.

    Returns
    -------
    Topology

    Raises
    ------
    ResultsFileError
        A missing, damaged, newer-major or malformed file, or an invalid stored fabric.
    """
    with reading(path) as f:
        return read_topology_group(f["topology"])


def read_schedules(path: str | os.PathLike) -> dict[str, Schedule]:
    """The schedules a results file holds, on its fabric.

    Parameters
    ----------
    path : str or os.PathLike
        A results file.

    Returns
    -------
    dict of str to Schedule
        By stored name, in the file's order; empty when it holds none.

    Raises
    ------
    ResultsFileError
        As :func:`read_topology`, or a stored schedule that is malformed.
    """
    with reading(path) as f:
        topo = read_topology_group(f["topology"])
        sg = f.get("schedules")
        if sg is None:
            return {}
        return {name: read_schedule_group(sg[name], topo) for name in sg}


def read_results(path: str | os.PathLike) -> dict[str, ResultTable]:
    """The result tables (predicted, simulated, measured) a results file holds.

    Parameters
    ----------
    path : str or os.PathLike
        A results file.

    Returns
    -------
    dict of str to ResultTable
        By stored name; empty when it holds none.

    Raises
    ------
    ResultsFileError
        A missing, damaged or newer-major file, or a malformed table.
    """
    with reading(path) as f:
        rg = f.get("results")
        if rg is None:
            return {}
        return {name: _read_table(rg[name]) for name in rg}


def summarize(path: str | os.PathLike) -> str:
    """A human summary: file metadata, fabric, schedules and result tables.

    Text from the file is escaped (:func:`solver.model.values.printable`: an escape sequence in
    a name or attribute is shown, not obeyed); figures come from the exact attributes. Nothing
    here verifies a schedule: ``forestcoll show`` does that before it prints this."""
    with reading(path) as f:
        topo = read_topology_group(f["topology"])
        lines = [
            (
                f"{path}: {SCHEMA} {attr_str(f, 'schema_version')}, written by {attr_str(f, 'creator')} "
                f"{attr_str(f, 'creator_version')}, created {attr_str(f, 'created')}"
            ),
            (
                f"fabric {topo.name!r}: {len(topo.compute_ids)} compute nodes, {len(topo.switch_ids)} switches, "
                f"{len(topo.links)} links"
            ),
        ]
        sg = f.get("schedules", {})
        lines.append(f"schedules ({len(sg)}):")
        for name in sg.keys() if sg else []:
            g = sg[name]
            k_lim = attr_int(g, "max_trees_per_root", 0, 2**31)
            ntrees = len(g["trees"]["root"]) if "trees" in g else 0
            if "phases" in g:
                ntrees = sum(len(g["phases"][p]["trees"]["root"]) for p in g["phases"])
            lines.append(
                f"  {name}: {attr_str(g, 'collective')}, k={attr_int(g, 'k', 0, 2**31)}"
                f"{f', K<={k_lim}' if k_lim else ''}, {_algbw_text(g)}, "
                f"{ntrees} trees"
            )
        rg = f.get("results", {})
        lines.append(f"results ({len(rg)}):")
        for name in rg.keys() if rg else []:
            g = rg[name]
            table = _read_table(g)
            sizes = table.size_bytes
            measured = int(np.count_nonzero(~np.isnan(table.measured_time)))
            span = (
                f"{format_size(int(sizes.min()))}..{format_size(int(sizes.max()))}"
                if len(sizes)
                else "empty"
            )
            lines.append(
                f"  {name}: {attr_str(g, 'source')} / {attr_str(g, 'algorithm')}, {len(sizes)} sizes {span}, "
                f"{measured} measured"
            )
        plans = f.get("plans", {})
        if len(plans):
            lines.append(f"plans ({len(plans)}):")
        for name in plans.keys() if plans else []:
            g = plans[name]
            reps = len(g["trees"]["root"]) if "trees" in g else 0
            order = attr_int(g, "order", 1, 2**31)
            lines.append(
                f"  {name}: {attr_str(g, 'collective')}, k={attr_int(g, 'k', 0, 2**31)}, "
                f"{_algbw_text(g)}, compressed: {reps} representative "
                f"trees x {order} translates = {reps * order} trees"
            )
        studies = f.get("studies", {})
        if len(studies):
            lines.append(f"studies ({len(studies)}):")
        for name in studies.keys() if studies else []:
            g = studies[name]
            state = "complete" if bool(g.attrs.get("complete", False)) else "incomplete"
            lines.append(
                f"  {name}: {attr_str(g, 'study')} ({attr_str(g, 'collective')}), "
                f"{int(g.attrs.get('rows', 0))} of {int(g.attrs.get('rows_total', 0))} rows, {state}"
            )
    return "\n".join(printable(line) for line in lines)


def _algbw_text(g: h5py.Group) -> str:
    """``algbw A GB/s (optimum O = p/q)`` from the exact attributes (the float ones are for
    other readers; nothing here trusts them)."""
    algbw = parse_frac(attr_str(g, "algbw_exact"), f"{g.name} algbw_exact")
    optimum = parse_frac(attr_str(g, "optimal_algbw_exact"), f"{g.name} optimum")
    return f"algbw {float(algbw):.3f} GB/s (optimum {float(optimum):.3f} = {frac(optimum)[:60]})"
