"""Compressed plans in the HDF5 results file: ``/plans/<name>`` (schema 1.2).

Layout (added in schema 1.2; a 1.1 file simply has no ``/plans``)::

    /plans/<name>          attrs as /schedules/<name> (collective, k, optimal_algbw, algbw, ...)
                           plus order (B, the order of the generator)
      generator            int32, one entry per fabric node: σ(v) as a node index
      trees/               the representative trees (roots of box 0), layout of /schedules
      bottleneck/, link_load/, warnings, timings
                           of the whole expanded schedule, layout of /schedules

A plan lives under ``/plans``, not ``/schedules``, so that a reader of schema 1.1 (which accepts
minor versions above its own) never mistakes the representative trees for a whole schedule:
it lists the file's schedules without the plan. Reading checks the generator's shape, dtype,
range and that it is a permutation (:func:`solver.io.hdf5.audit.permutation`) and ``order`` against
the node count; whether σ is an automorphism of the fabric and the loads add up is the
verifier's job (:func:`solver.algorithm.verify_plan.verify_compressed`).
"""

from __future__ import annotations

import os

import h5py
import numpy as np

from solver.io.hdf5.audit import permutation
from solver.io.hdf5.toolkit import (
    ResultsFileError,
    attr_int,
    check_name,
    check_refs,
    dataset,
    modify,
    read_schedule_group,
    read_topology_group,
    reading,
    write_schedule_group,
)
from solver.model.plan import CompressedSchedule

PLAN_SCHEMA_VERSION = "1.2"


def write_plan(path: str | os.PathLike, plan: CompressedSchedule, name: str | None = None) -> str:
    """Store ``plan`` as ``/plans/<name>`` (default: its collective) in the results file ``path``
    (created if missing; a plan of that name is replaced); return the name."""
    name = check_name(name or plan.collective)
    topo = plan.topology
    index = {v: i for i, v in enumerate(topo.node_ids)}
    check_refs(plan.base, index)
    if plan.generator.shape != (len(index),):
        raise ResultsFileError(
            f"plan {name!r}: generator has {plan.generator.shape[0]} entries, "
            f"the fabric {len(index)} nodes"
        )

    def edit(f: h5py.File) -> None:
        f.attrs["schema_version"] = _newer(f.attrs.get("schema_version", ""))
        pg = f.require_group("plans")
        if name in pg:
            del pg[name]
        g = pg.create_group(name)
        write_schedule_group(g, plan.base, topo)
        g.attrs["order"] = int(plan.order)
        dataset(g, "generator", plan.generator, np.int32)

    modify(path, topo, edit)
    return name


def _newer(version) -> str:
    """The file's version raised to at least 1.2 (a plan needs 1.2 readers to be seen)."""
    text = version.decode() if isinstance(version, bytes) else str(version)
    try:
        major, minor = (int(x) for x in text.split("."))
    except ValueError:
        return PLAN_SCHEMA_VERSION
    return text if (major, minor) >= (1, 2) else PLAN_SCHEMA_VERSION


def read_plans(path: str | os.PathLike) -> dict[str, CompressedSchedule]:
    """Every compressed plan of the results file (``{}`` for files without ``/plans``)."""
    with reading(path) as f:
        topo = read_topology_group(f["topology"])
        pg = f.get("plans")
        if pg is None:
            return {}
        return {name: _read_plan_group(pg[name], topo, str(path)) for name in pg}


def _read_plan_group(g: h5py.Group, topo, where: str) -> CompressedSchedule:
    n = len(topo.nodes)
    if "phases" in g:
        raise ResultsFileError(f"{g.name}: a plan has no phases")
    base = read_schedule_group(g, topo)
    generator = permutation(g["generator"], n, where, ResultsFileError)
    order = attr_int(g, "order", 1, max(n, 1))
    return CompressedSchedule(base, generator, order)


__all__ = ["PLAN_SCHEMA_VERSION", "read_plans", "write_plan"]
