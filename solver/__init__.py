"""ForestColl Designer's solver: pure computation (numpy, numba, networkx, h5py), never Qt.

Public API
----------
- :class:`Topology`, :class:`Node`, :class:`Link` and :func:`validate` (``solver.topology``)
- :func:`load_topology`, :func:`save_topology` (``solver.formats``)
- :func:`solve` -> :class:`Schedule` (``solver.pipeline``, ``solver.schedule``)
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import Cancelled, ForestCollError, SolverError, TopologyError
from .formats import load as load_topology
from .formats import save as save_topology
from .schedule import BottleneckCut, LinkLoad, Schedule, Tree, TreeEdge
from .topology import Link, Node, Topology, validate


def solve(topology, collective="allgather", max_trees_per_root=None, progress=None, cancel=None):
    """Compute a ForestColl schedule; see :func:`solver.pipeline.solve`."""
    from .pipeline import solve as _solve

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
