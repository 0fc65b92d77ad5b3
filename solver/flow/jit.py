"""The one place that configures numba for the solver's kernels.

Every kernel is compiled with ``nogil=True`` (so a GUI worker thread does not block the UI) and
``cache=True`` (so later launches skip compilation). Kernels must also run as plain Python under
``NUMBA_DISABLE_JIT=1``.

Numba invalidates a cached kernel only when *its own* source file changes, not when a kernel it
calls in another module does (a stale ``augment`` would stay inlined in ``packing._grow``). So,
unless ``NUMBA_CACHE_DIR`` is set, the cache lives in a directory named after a hash of every
solver module that defines kernels (imports this module): any change to any of them starts from
a fresh cache.

Kernels that allocate nothing (the flow, repair, packing and splitting kernels: all their arrays
come from Python) use :data:`njit_noalloc`, which also turns off numba's reference counting (NRT).
With it on, every array a kernel touches through a named tuple (``g.cap``, ``work.level``, a row
view) costs atomic incref/decref pairs that numba cannot prune inside loops; on small fabrics that
made tree packing ~3x slower than the same loops over plain array arguments. Such a kernel must not
create or return arrays (numba refuses to compile it then: "NRT required but not enabled").
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

import numba


def _kernel_sources_stamp() -> str:
    digest = hashlib.sha1(numba.__version__.encode())
    root = Path(__file__).resolve().parent.parent  # the solver package
    for path in sorted(root.rglob("*.py")):
        text = path.read_bytes()
        if b"solver.flow.jit import" in text or path == Path(__file__).resolve():
            digest.update(str(path.relative_to(root)).encode())
            digest.update(text)
    return digest.hexdigest()[:16]


def _configure_cache() -> None:
    if os.environ.get("NUMBA_CACHE_DIR") or numba.config.CACHE_DIR:
        return
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        target = base / "forestcoll" / "numba" / _kernel_sources_stamp()
        target.mkdir(parents=True, exist_ok=True)
    except OSError:
        return  # fall back to numba's default locations
    numba.config.CACHE_DIR = str(target)


_configure_cache()

njit = functools.partial(numba.njit, nogil=True, cache=True)
njit_noalloc = functools.partial(numba.njit, nogil=True, cache=True, _nrt=False)
prange = numba.prange

__all__ = ["njit", "njit_noalloc", "prange"]
