"""Big fabrics built in a worker thread without stalling the GUI thread: :func:`gc_frozen`."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def gc_frozen(fn: Callable[[], T]) -> T:
    """``fn()`` with Python's cyclic collector paused, then every object alive frozen out of
    its reach (:func:`gc.freeze`).

    A full collection walks every tracked object while it holds the GIL: with the ~10^6
    objects of a 15 360-GPU fabric (nodes, links, their dicts) being made in a worker, each one
    stalled the GUI thread for ~150 ms (``benchmarks/gui_open_large.py``). Nodes and links form
    no reference cycles; reference counting still frees them when the fabric is closed.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        out = fn()
    finally:
        if was_on:
            gc.enable()
    gc.freeze()
    return out
