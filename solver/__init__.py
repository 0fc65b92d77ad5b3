"""ForestColl Designer's solver: pure computation (numpy, numba, networkx, h5py), never Qt.

Public API
----------
- :class:`Topology`, :class:`Node`, :class:`Link` and :func:`validate` (``solver.model.topology``)
- :func:`load_topology`, :func:`save_topology` (``solver.io.formats``)
- :func:`solve` -> :class:`Schedule` (``solver.algorithm.pipeline``, ``solver.model.schedule``)
"""

from __future__ import annotations

from solver._version import __version__

# The public names are imported on first use (PEP 562), so ``import solver.cli`` stays light:
# the command line can catch Ctrl-C while the heavy modules (numpy, numba, h5py) load.
_LAZY = {
    "Cancelled": "solver.model.errors",
    "ForestCollError": "solver.model.errors",
    "SolverError": "solver.model.errors",
    "TopologyError": "solver.model.errors",
    "BottleneckCut": "solver.model.schedule",
    "LinkLoad": "solver.model.schedule",
    "Schedule": "solver.model.schedule",
    "Tree": "solver.model.schedule",
    "TreeEdge": "solver.model.schedule",
    "Link": "solver.model.topology",
    "Node": "solver.model.topology",
    "Topology": "solver.model.topology",
    "validate": "solver.model.topology",
}


def __getattr__(name: str):
    import importlib

    if name == "load_topology":
        return importlib.import_module("solver.io.formats").load
    if name == "save_topology":
        return importlib.import_module("solver.io.formats").save
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'solver' has no attribute {name!r}")


def solve(topology, collective="allgather", max_trees_per_root=None, progress=None, cancel=None):
    """Compute a throughput-optimal ForestColl schedule (:func:`solver.algorithm.pipeline.solve`).

    Parameters
    ----------
    topology : Topology
        The fabric (validated here).
    collective : {"allgather", "reduce-scatter", "allreduce"}
    max_trees_per_root : int, optional
        At most this many trees per root; ``None``: the exact optimum with its own k.
    progress : callable(phase, fraction), optional
        Called with phases "optimum", "switch_removal", "trees", "paths".
    cancel : threading.Event-like or zero-argument callable, optional
        When set/true, the solve stops with :class:`Cancelled`.

    Returns
    -------
    Schedule
        Exact optimum, bottleneck cut, trees on physical paths, per-link load and timings.

    Raises
    ------
    TopologyError
        The fabric is invalid (one line naming the node or link).
    SolverError
        An unknown collective, a bad ``max_trees_per_root``, or a fabric past the size limits.
    Cancelled
        ``cancel`` was set.

    Notes
    -----
    Deterministic: the same input gives the same schedule. How k is chosen under
    ``max_trees_per_root`` and how unbalanced switches are trimmed: the Notes of
    :func:`solver.algorithm.pipeline.solve`.

    Examples
    --------
    >>> from solver import solve
    >>> from solver.io.templates import ring
    >>> schedule = solve(ring(4), "allgather")
    >>> schedule.collective, len(schedule.topology.compute_ids)
    ('allgather', 4)
    """
    from solver.algorithm.pipeline import solve as _solve

    return _solve(
        topology,
        collective=collective,
        max_trees_per_root=max_trees_per_root,
        progress=progress,
        cancel=cancel,
    )


__all__ = [
    "__version__",
    "Cancelled",
    "ForestCollError",
    "SolverError",
    "TopologyError",
    "Topology",
    "Node",
    "Link",
    "validate",
    "load_topology",
    "save_topology",
    "solve",
    "Schedule",
    "Tree",
    "TreeEdge",
    "BottleneckCut",
    "LinkLoad",
]
