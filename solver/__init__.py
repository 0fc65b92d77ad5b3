"""ForestColl Designer's solver: pure computation (numpy, numba, networkx, h5py), never Qt.

Public API
----------
- :class:`Topology`, :class:`Node`, :class:`Link` and :func:`validate` (``solver.model.topology``)
- :func:`load_topology`, :func:`save_topology` (``solver.io.formats``)
- :func:`solve` -> :class:`Schedule` (``solver.algorithm.pipeline``, ``solver.model.schedule``)
"""

from __future__ import annotations

from solver._version import __version__
from solver.model.errors import Cancelled, ForestCollError, SolverError, TopologyError
from solver.io.formats import load as load_topology
from solver.io.formats import save as save_topology
from solver.model.schedule import BottleneckCut, LinkLoad, Schedule, Tree, TreeEdge
from solver.model.topology import Link, Node, Topology, validate


def solve(topology, collective="allgather", max_trees_per_root=None, progress=None, cancel=None):
    """Compute a ForestColl schedule; see :func:`solver.algorithm.pipeline.solve`."""
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
