"""A threadblock's <step>s as the runtime loads them: transmissions, fused reductions, dependencies.

The runtimes do not run <step> elements one by one. Their loader (msccl_parser.cc:467-656, the
same in RCCL, msccl-executor-nccl and, as topo.cc:954-1145, the legacy runtime) turns them into
*transmissions*:

- a ``nop`` is no transmission; its ``depid``/``deps`` join the dependency list of the next
  transmission (msccl_parser.cc:545-549, 613-621), which must itself carry a ``depid``
  (msccl_parser.cc:616);
- consecutive ``re`` steps with the same destination (buffer and offset), the same source buffer
  and no ``depid`` are fused into one transmission reducing all their sources at once, at most 16
  (MSCCL_MAX_REDUCE_FUSION) per threadblock, the fused one taking the last step's ``cnt`` and
  ``hasdep`` (msccl_parser.cc:556-566, 623-644);
- the kernel numbers steps as it goes: a transmission after ``d`` dependencies advances the step
  counter by ``d - 1`` first, a fusion of ``k`` reductions by ``k - 1``; a transmission with
  ``hasdep`` then publishes the counter as its threadblock's flag, and a dependency ``(depid,
  deps)`` waits until that flag is ``>= deps`` (src/device/msccl_kernel_impl.h:266-379 in RCCL).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from solver.msccl.program import Move, Step, Threadblock
from solver.msccl.runtimes import RECVS, SENDS

MAX_REDUCE_FUSION = 16  # msccl_struct.h:20


@dataclass(slots=True)
class Transmission(Move):
    """A move as the kernel runs it: one step, or several fused ``re`` steps (see the module
    docstring), with the dependencies the nops before it carried."""

    hasdep: int
    first: Step  # the <step> that opened it (named in messages)
    deps: list[tuple[int, int]] = field(default_factory=list)  # (threadblock, step) to wait for
    reductions: list[int] = field(default_factory=list)  # source offsets of a (fused) ``re``
    flag: int = -1  # the kernel's step counter when it completes (its flag if hasdep)
    piece: int = 0  # which of the transmission's connection pieces this is (see split_pieces)
    pieces: int = 1
    whole: Transmission | None = None  # the transmission a piece belongs to


def split_pieces(tx: Transmission, per_call: int = 1) -> list[Transmission]:
    """``tx`` as the kernel streams it through a connection: one piece per kernel call.

    The kernel runs a transmission of ``count`` chunks as calls of at most ``maxAllowedCount``
    chunks each (``per_call``; msccl_kernel_impl.h:290-303 in RCCL 0cbce2a7, msccl_kernel.cu:245
    in msccl-executor). Each call waits for connection room (a send) or data (a receive) slice by
    slice, so the pieces move through the connection one at a time: a send never needs room for
    all of them at once (prims_simple.h:112-127, 162, 179). Dependencies are waited for before
    the first piece (msccl_kernel_impl.h:270-284) and the flag is published after the last
    (377-378). Transmissions that use no connection (``cpy``, ``re``, ``nop``) and those that
    fit one call stay whole.
    """
    if tx.cnt <= per_call or (tx.type not in SENDS and tx.type not in RECVS):
        return [tx]
    starts = list(range(0, tx.cnt, per_call))
    return [
        Transmission(
            type=tx.type,
            srcbuf=tx.srcbuf,
            srcoff=tx.srcoff + c,
            dstbuf=tx.dstbuf,
            dstoff=tx.dstoff + c,
            cnt=min(per_call, tx.cnt - c),
            hasdep=tx.hasdep if k == len(starts) - 1 else 0,
            first=tx.first,
            deps=tx.deps if k == 0 else [],
            reductions=[],
            flag=tx.flag,
            piece=k,
            pieces=len(starts),
            whole=tx,
        )
        for k, c in enumerate(starts)
    ]


@dataclass
class Lowered:
    transmissions: list[Transmission]
    dependencies: int  # entries of dependentBid[] used
    reductions: int  # entries of reductionSrcOffsets[] used
    errors: list[tuple[Step, str]]  # (step, message) for the loader's own refusals


def lower(tb: Threadblock) -> Lowered:
    """The transmissions of ``tb``, as the loader builds them (see the module docstring)."""
    out: list[Transmission] = []
    errors: list[tuple[Step, str]] = []
    deps: list[tuple[int, int]] = []
    used = 0  # oldDependencePointer
    fuse_into: tuple[str, int, str] | None = None  # (dstbuf, dstoff, srcbuf) of an open fusion
    reductions = 0
    for st in tb.steps:
        if st.depid >= 0:
            deps.append((st.depid, st.deps))
        fused = (
            st.type == "re"
            and fuse_into == (st.dstbuf, st.dstoff, st.srcbuf)
            and st.depid == -1
            and bool(out)
        )
        if st.type == "re" and not fused:
            fuse_into = None
        if st.type == "nop":
            continue
        if fused:
            tx = out[-1]
            tx.srcoff, tx.cnt, tx.hasdep = st.srcoff, st.cnt, st.hasdep
        else:
            tx = Transmission(
                st.type, st.srcbuf, st.srcoff, st.dstbuf, st.dstoff, st.cnt, st.hasdep, st
            )
            out.append(tx)
            tx.deps = deps[used:]
            if tx.deps and st.depid < 0:
                errors.append(
                    (
                        st,
                        "follows nop dependencies but has no depid itself (msccl_parser.cc:616: "
                        "'the last reduction must be a part of the first immediate instruction')",
                    )
                )
            used = len(deps)
        if st.type != "re":
            fuse_into = None
            continue
        tx.reductions.append(st.srcoff)
        reductions += 1
        if st.hasdep or reductions == MAX_REDUCE_FUSION:
            fuse_into = None
        else:
            fuse_into = (st.dstbuf, st.dstoff, st.srcbuf)
    _number(out)
    return Lowered(out, len(deps), reductions, errors)


def _number(transmissions: list[Transmission]) -> None:
    """The kernel's step counter at the end of each transmission (msccl_kernel_impl.h:266-379)."""
    step = 0
    for tx in transmissions:
        if tx.deps:
            step += len(tx.deps) - 1
        if tx.type == "re" and tx.cnt > 0:
            step += len(tx.reductions) - 1
        tx.flag = step
        step += 1
