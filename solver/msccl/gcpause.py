"""Pause Python's cyclic garbage collector while a program of millions of steps is built or run.

Building and executing a 1024-rank program allocates millions of small objects that live until
the end (steps, transmissions, slots) and form no reference cycles; every collection of the
oldest generation walks all of them again, which was a third to a half of the time at 256 ranks
(check 30 s with collections, 18 s without). Cycles made meanwhile are collected when it resumes.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused():
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
