"""Runtime limits a schedule must fit before its MSCCL program is built.

Building and executing the program of a large schedule takes minutes and gigabytes; three of
the runtimes' limits can be decided from the trees alone, in one pass over their edges, and
:func:`check_fits` refuses such a schedule with one line naming the limit and its source line:

- ranks: every ``<gpu>`` is a child of ``<algo>`` and the XML reader keeps at most ``MAX_SUBS``
  children (RCCL/msccl-executor ``msccl_parser.h:22``, legacy ``xml.h:18``);
- threadblocks: a ``<tb>`` has one send peer and one receive peer, so a rank needs at least as
  many threadblocks as it has distinct peers it sends to (or receives from), and the runtime
  reads at most ``MSCCL_MAX_NUM_THREAD_BLOCKS`` per rank;
- XML elements: the reader keeps every element of a rank's file in one array of ``MAX_NODES``
  (the ``<algo>``, all ``<gpu>``s, the rank's ``<tb>``s and ``<step>``s). The program sends each
  tree edge's data in at least one ``<step>`` at each end, and one step does at most one receive
  and one send, so per tree a rank needs at least max(receives, sends) steps.

These are lower bounds: a schedule that passes may still fail the full rule check
(:func:`solver.msccl.rules.check_rules`) after it is built. The same bounds (total steps and
threadblocks) also refuse, before building, a program too large for the symbolic execution
every written XML passes (:func:`solver.msccl.interpreter.clock_cost` against ``CLOCK_BYTES`` and
``CLOCK_OPS``: its clocks grow with steps times the threadblocks of one rank).
"""

from __future__ import annotations

from collections import defaultdict

from solver.model.schedule import Schedule
from solver.msccl import interpreter
from solver.msccl.runtimes import MscclError, PeersLimit, Runtime


def check_rank_count(n: int, rt: Runtime) -> None:
    """Refuse more ranks than the runtime's XML reader keeps."""
    if n > rt.max_subs:
        raise MscclError(
            f"{n} ranks: {rt.name} reads at most {rt.max_subs} <gpu> elements per algorithm "
            f"(MAX_SUBS, {rt.where('max_subs')}); no MSCCL XML can hold this schedule"
        )


def check_fits(schedule: Schedule, rt: Runtime, ranks: list[str]) -> None:
    """Refuse ``schedule`` if it cannot fit runtime ``rt`` (see the module docstring)."""
    n = len(ranks)
    check_rank_count(n, rt)
    trees = [t for _, t in schedule.all_trees()]
    send_peers: dict[str, set[str]] = defaultdict(set)
    recv_peers: dict[str, set[str]] = defaultdict(set)
    steps: dict[str, int] = defaultdict(int)
    for tree in trees:
        sends: dict[str, int] = defaultdict(int)
        recvs: dict[str, int] = defaultdict(int)
        for e in tree.edges:
            sends[e.src] += 1
            recvs[e.dst] += 1
            send_peers[e.src].add(e.dst)
            recv_peers[e.dst].add(e.src)
        for v in set(sends) | set(recvs):
            steps[v] += max(sends.get(v, 0), recvs.get(v, 0))
    for v in ranks:
        peers = max(len(send_peers.get(v, ())), len(recv_peers.get(v, ())))
        if peers > rt.max_threadblocks:
            raise PeersLimit(
                f"rank {v} sends to or receives from {peers} peers, so it needs at least {peers} "
                f"threadblocks, more than the {rt.name} limit {rt.max_threadblocks} "
                f"(MSCCL_MAX_NUM_THREAD_BLOCKS, {rt.where('max_threadblocks')}); a threadblock has "
                "one send and one receive peer"
            )

    def tbs(v: str) -> int:
        return max(len(send_peers.get(v, ())), len(recv_peers.get(v, ())), 1)

    def elements(v: str) -> int:
        return 1 + n + tbs(v) + steps.get(v, 0)

    worst = max(ranks, key=elements)
    if elements(worst) >= rt.max_nodes:
        raise MscclError(
            f"rank {worst} needs at least {elements(worst)} XML elements, more than the {rt.name} "
            f"reader keeps ({rt.max_nodes - 1}; MAX_NODES, {rt.where('max_nodes')}): <algo>, "
            f"{n} <gpu>s, a <tb> per peer and {steps.get(worst, 0)} <step>s for its tree edges"
        )
    total_steps = sum(steps.get(v, 0) for v in ranks)
    total_tbs = sum(tbs(v) for v in ranks)
    widest = max(tbs(v) for v in ranks)
    clock_bytes, clock_ops = interpreter.clock_cost(total_steps, total_tbs, widest)
    if clock_bytes > interpreter.CLOCK_BYTES or clock_ops > interpreter.CLOCK_OPS:
        raise MscclError(
            f"the program would have at least {total_steps} steps on {total_tbs} threadblocks: "
            f"{rt.name}'s limits allow it, but it is too large for the symbolic execution that "
            f"checks every XML before it is written ({clock_bytes // 2**20} MiB of clocks, "
            f"{clock_ops:.1e} clock operations; its limits: {interpreter.clock_limit_text()}); "
            "export a smaller fabric or fewer trees per root"
        )


__all__ = ["check_fits", "check_rank_count"]
