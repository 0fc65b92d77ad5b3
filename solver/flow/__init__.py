"""Numba max-flow kernels and the integer CSR views of a fabric they run on.

Imports only :mod:`solver.model`. Public pieces:

- :mod:`solver.flow.maxflow` — the residual-network convention, :class:`FlowGraph` /
  :class:`Workspace` (the arrays the kernels take), :func:`augment` (Dinic with a cutoff),
  :func:`mark_reachable`, :func:`flow_into`, and :class:`FlowNetwork` (validating wrapper);
- :mod:`solver.flow.repair` — :class:`Excess`, :func:`reduce_arc` and :func:`repair_flow`:
  keep a stored flow valid while capacities change, instead of recomputing it;
- :mod:`solver.flow.csr` — :class:`IndexedFabric` (nodes by index, integer bandwidths) and
  :func:`flow_network` (super source to every compute node);
- :mod:`solver.flow.jit` — the one numba configuration (``nogil``, ``cache``).
"""
