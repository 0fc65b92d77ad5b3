"""Each collective's buffers and postcondition, in chunks of one MSCCL loop.

A chunk is ``count * sizeMultiplier / nchunksperloop`` elements (msccl_setup.cc:473 in RCCL):
``sizeMultiplier`` is ngpus for allgather, reducescatter and alltoall and 1 otherwise
(msccl_parser.cc:335-373), so with C = nchunksperloop and n = ngpus the user's buffers hold:

=============== ================ ================ =======================================
collective      input chunks     output chunks    in place (msccl_lifecycle.cc:313-326)
=============== ================ ================ =======================================
allreduce       C                C                input = output
allgather       C / n            C                input = output block of the rank
reduce-scatter  C                C / n            output = input block of the rank
alltoall        C                C                input = output
broadcast       C                C                input = output
reduce          C                C                input = output
gather          C                n * C (root)     input = output block of the rank
scatter         n * C (root)     C                output = input block of the rank
=============== ================ ================ =======================================

Contents are symbolic: input chunk ``j`` of rank ``q`` holds the contribution ``(q, j)``; a
reduction holds the set of contributions it summed. The postcondition says what every output
chunk must hold. MSCCL XML names no root, so for the rooted collectives (broadcast, reduce,
gather, scatter) the checker finds the root the program serves and verifies it.
``send``, ``recv`` and ``alltoallv`` move sizes only known at run time: they are executed (rules,
deadlocks, races, unwritten reads) but their result is not verified.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Value = frozenset  # of (rank, input chunk) contributions


@dataclass(frozen=True)
class Layout:
    n_in: int
    n_out: int
    block: int  # chunks per rank block (the in-place shift unit)
    inplace_shift: str  # "" (same buffer), "i" (input sits in output), "o" (output sits in input)


def layout(collective: str, n: int, C: int) -> Layout | None:
    """The buffers of ``collective``; None when its sizes are only known at run time."""
    b = C // n if n else 0
    table = {
        "allreduce": Layout(C, C, 0, ""),
        "alltoall": Layout(C, C, 0, ""),
        "broadcast": Layout(C, C, 0, ""),
        "reduce": Layout(C, C, 0, ""),
        "allgather": Layout(b, C, b, "i"),
        "reduce-scatter": Layout(C, b, b, "o"),
        "gather": Layout(C, n * C, C, "i"),
        "scatter": Layout(n * C, C, C, "o"),
    }
    return table.get(collective)


def needs_blocks(collective: str) -> bool:
    """Whether nchunksperloop must be a multiple of ngpus (the chunks are split by rank)."""
    return collective in ("allgather", "reduce-scatter", "alltoall")


def reduces(collective: str) -> bool:
    return collective in ("allreduce", "reduce-scatter", "reduce")


# ---------------------------------------------------------------------------- postconditions
# want(rank, out chunk, root) -> the Value it must hold, or None when anything goes
Want = Callable[[int, int, int], "Value | None"]


def postcondition(collective: str, n: int, C: int) -> tuple[Want, bool] | None:
    """``(want, rooted)`` for ``collective``, or None when it cannot be verified statically."""
    b = C // n if n else 0
    everyone = range(n)
    if collective == "allreduce":
        return (lambda r, j, root: frozenset((q, j) for q in everyone)), False
    if collective == "allgather":
        return (lambda r, j, root: frozenset({(j // b, j % b)})), False
    if collective == "reduce-scatter":
        return (lambda r, j, root: frozenset((q, r * b + j) for q in everyone)), False
    if collective == "alltoall":
        return (lambda r, j, root: frozenset({(j // b, r * b + j % b)})), False
    if collective == "broadcast":
        return (lambda r, j, root: frozenset({(root, j)})), True
    if collective == "reduce":
        return (lambda r, j, root: frozenset((q, j) for q in everyone) if r == root else None), True
    if collective == "gather":
        return (lambda r, j, root: frozenset({(j // C, j % C)}) if r == root else None), True
    if collective == "scatter":
        return (lambda r, j, root: frozenset({(root, r * C + j)})), True
    return None


def probe_rank(collective: str, root: int) -> int:
    """The rank whose first output chunk tells whether ``root`` is the one served."""
    return root if collective in ("reduce", "gather") else 0


def show(value: Value | None) -> str:
    if value is None:
        return "nothing"
    items = sorted(value)
    text = ", ".join(f"r{q}c{j}" for q, j in items[:4])
    if len(items) > 4:
        text += f", ... ({len(items)} contributions)"
    return "{" + text + "}"
