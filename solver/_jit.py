"""The one place that configures numba for the solver's kernels.

Every kernel is compiled with ``nogil=True`` (so a GUI worker thread does not block the UI) and
``cache=True`` (so later launches skip compilation). Kernels must also run as plain Python under
``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import functools

import numba

njit = functools.partial(numba.njit, nogil=True, cache=True)
prange = numba.prange

__all__ = ["njit", "prange"]
