"""Numba max-flow kernels and the integer CSR views of a fabric they run on.

Imports only :mod:`solver.model`. See :mod:`solver.flow.maxflow` for the residual-network convention.
"""
