"""The checker at scale: its clocks are per rank, orderings through other ranks are searched.

- a 128-rank program (16x DGX H100 rail, 32 640 steps) passes, and mutations of it deep inside
  (a dropped dependency, a dropped step, a chunk sent to the wrong place) are refused;
- an ordering that exists only through another rank (a chunk sent away, its answer received
  into the same place) is accepted, and the same program without that round trip is a race;
- RCCL allreduce exports order the allgather's receive after the rank's own partial-sum send
  inside the rank; without that dependency the program is still correct (found through the
  other ranks);
- the line-by-line XML writer gives ElementTree's text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

import solver
from solver.io.templates import dgx_h100_rail, mi250
from solver.msccl import (
    ExportOptions,
    MscclError,
    build_program,
    check_program,
    check_xml,
    parse_xml,
    to_xml,
)
from solver.msccl.program import Gpu, Program, Step, Threadblock
from solver.msccl.runtimes import RUNTIMES

_CACHE: dict = {}


def rail16(collective: str, runtime: str) -> str:
    key = (collective, runtime)
    if key not in _CACHE:
        schedule = solver.solve(dgx_h100_rail(16), collective, max_trees_per_root=1)
        _CACHE[key] = to_xml(build_program(schedule, ExportOptions(RUNTIMES[runtime])))
    return _CACHE[key]


def steps_of(program: Program, rank: int):
    gpu = next(g for g in program.gpus if g.id == rank)
    return [(tb, st) for tb in gpu.tbs for st in tb.steps]


def test_128_rank_allgather_passes_and_mutations_deep_inside_are_refused():
    text = rail16("allgather", "msccl-executor")
    report = check_xml(text, RUNTIMES["msccl-executor"])
    assert report.ngpus == 128 and report.steps_executed == 32640 and report.verified

    # a forwarding send on rank 77 that no longer waits for the receive of its chunk
    p = parse_xml(text)
    tb, st = next(
        (tb, st)
        for tb, st in steps_of(p, 77)
        if st.type == "s" and st.srcbuf == "o" and st.depid >= 0
    )
    st.depid, st.deps = -1, -1
    with pytest.raises(
        MscclError,
        match=rf"rank 77 tb {tb.id} step {st.s} \(s\) reads o\[\d+\] (before anything|written by rank 77)",
    ):
        check_program(p, RUNTIMES["msccl-executor"])

    # a receive on rank 100 dropped (the step becomes a nop): its sender's chunk is never taken
    p = parse_xml(text)
    tb, st = next((tb, st) for tb, st in steps_of(p, 100) if st.type == "r" and st.hasdep == 0)
    st.type, st.cnt = "nop", 0
    with pytest.raises(MscclError, match=r"deadlock|never received|wrong result"):
        check_program(p, RUNTIMES["msccl-executor"])

    # a receive on rank 5 writing one chunk further on: a wrong result names the rank and chunk
    p = parse_xml(text)
    tb, st = next(
        (tb, st)
        for tb, st in steps_of(p, 5)
        if st.type == "r" and st.hasdep == 0 and st.dstoff < 120
    )
    st.dstoff += 1
    with pytest.raises(
        MscclError, match=r"rank 5 .*(overwrites|wrong result: rank 5 output chunk)"
    ):
        check_program(p, RUNTIMES["msccl-executor"])


def _round_trip(answer_first: bool) -> Program:
    """Rank 0 copies its input to o[0] (tb 2), sends o[0] to rank 1 (tb 0) and receives rank 1's
    answer into o[0] (tb 1). Rank 1 receives and sends back (the answer follows the chunk: tb 0
    of rank 0 has read o[0] before tb 1 overwrites it, through rank 1 only) or, with
    ``answer_first``, sends before it receives: nothing orders the read and the overwrite."""

    def step(s, kind, src, dst, depid=-1, deps=-1, hasdep=0):
        return Step(kind, *src, *dst, 1, s=s, depid=depid, deps=deps, hasdep=hasdep)

    rank1 = [step(0, "r", ("i", 0), ("o", 0)), step(1, "s", ("o", 0), ("o", 0))]
    if answer_first:
        rank1 = [step(0, "s", ("i", 0), ("o", 0)), step(1, "r", ("i", 0), ("o", 0))]
    gpus = [
        Gpu(
            0,
            1,
            1,
            0,
            [
                Threadblock(0, 1, -1, 0, [step(0, "s", ("o", 0), ("o", 0), depid=2, deps=0)]),
                Threadblock(1, -1, 1, 0, [step(0, "r", ("i", 0), ("o", 0))]),
                Threadblock(2, -1, -1, 0, [step(0, "cpy", ("i", 0), ("o", 0), hasdep=1)]),
            ],
        ),
        Gpu(1, 1, 1, 0, [Threadblock(0, 0, 0, 0, rank1)]),
    ]
    return Program("round trip", "Simple", 1, 2, 2, "alltoallv", 0, 1, 0, 0, gpus=gpus)


def test_an_ordering_through_another_rank_is_found_and_its_absence_is_a_race():
    text = to_xml(_round_trip(answer_first=False))
    report = check_xml(text, RUNTIMES["msccl-executor"])
    assert report.steps_executed == 5
    with pytest.raises(
        MscclError,
        match=r"rank 0 tb 1 step 0 \(r\) overwrites o\[0\] (written by rank 0 tb 2|while rank 0 tb 0) .*\(a race\)",
    ):
        check_xml(to_xml(_round_trip(answer_first=True)), RUNTIMES["msccl-executor"])


def test_rccl_allreduce_orders_its_receives_inside_the_rank_and_is_correct_without_that():
    schedule = solver.solve(mi250(2), "allreduce", max_trees_per_root=1)
    program = build_program(schedule, ExportOptions(RUNTIMES["rccl"]))
    check_program(program, RUNTIMES["rccl"])
    # the allgather's receives (type r into the output) that wait on a send of the same rank
    sends = {
        (g.id, tb.id, st.s): st
        for g in program.gpus
        for tb in g.tbs
        for st in tb.steps
        if st.type == "s"
    }
    waiting = [
        st
        for g in program.gpus
        for tb in g.tbs
        for st in tb.steps
        if st.type == "r" and st.dstbuf == "o" and (g.id, st.depid, st.deps) in sends
    ]
    assert waiting, "no allgather receive waits for the rank's own partial-sum send"
    for st in waiting:
        st.depid, st.deps = -1, -1
    report = check_program(program, RUNTIMES["rccl"])  # the order through the other ranks is found
    assert report.verified


def _reference_xml(program: Program) -> str:
    """ElementTree's text of ``program``: what to_xml wrote before it was written line by line."""
    from solver.msccl.program import _COMMENT_DASHES, attribute_text, printable

    algo = ET.Element(
        "algo",
        {
            "name": attribute_text(program.name or ""),
            "proto": program.proto,
            "nchannels": str(program.nchannels),
            "nchunksperloop": str(program.nchunksperloop),
            "ngpus": str(program.ngpus),
            "coll": program.coll,
            "inplace": str(program.inplace),
            "outofplace": str(program.outofplace),
            "minBytes": str(program.min_bytes),
            "maxBytes": str(program.max_bytes),
        },
    )
    for text in program.comments:
        algo.append(ET.Comment(f" {_COMMENT_DASHES.sub('-', printable(text))} "))
    for g in program.gpus:
        ge = ET.SubElement(
            algo,
            "gpu",
            {
                "id": str(g.id),
                "i_chunks": str(g.i_chunks),
                "o_chunks": str(g.o_chunks),
                "s_chunks": str(g.s_chunks),
            },
        )
        for tb in g.tbs:
            te = ET.SubElement(
                ge,
                "tb",
                {
                    "id": str(tb.id),
                    "send": str(tb.send),
                    "recv": str(tb.recv),
                    "chan": str(tb.chan),
                },
            )
            for st in tb.steps:
                ET.SubElement(
                    te,
                    "step",
                    {
                        k: str(getattr(st, k))
                        for k in (
                            "s",
                            "type",
                            "srcbuf",
                            "srcoff",
                            "dstbuf",
                            "dstoff",
                            "cnt",
                            "depid",
                            "deps",
                            "hasdep",
                        )
                    },
                )
    ET.indent(algo, space="  ")
    return ET.tostring(algo, encoding="unicode") + "\n"


@pytest.mark.parametrize("runtime", ["msccl-executor", "rccl", "msccl-legacy"])
def test_the_xml_writer_gives_elementtree_text(runtime):
    schedule = solver.solve(mi250(2), "allreduce", max_trees_per_root=1)
    options = ExportOptions(RUNTIMES[runtime], name='odd & "name" <x>\tend')
    program = build_program(schedule, options)
    assert to_xml(program) == _reference_xml(program)
    odd = _round_trip(False)
    odd.comments = ["a -- b", "ctrl \x01"]
    odd.gpus[0].tbs[0].steps[0].srcbuf = 'o&<"'
    odd.gpus.append(Gpu(2, 1, 1, 0, []))
    odd.gpus[1].tbs.append(Threadblock(1, -1, -1, 0, []))
    assert to_xml(odd) == _reference_xml(odd)
    empty = Program("e", "Simple", 1, 2, 2, "allgather", 1, 1, 0, 0)
    assert to_xml(empty) == _reference_xml(empty)


def test_the_search_through_other_ranks_is_bounded(monkeypatch):
    import solver.msccl.interpreter as interpreter

    monkeypatch.setattr(interpreter, "SEARCH_BUDGET", 1)
    with pytest.raises(MscclError, match=r"more than 1 events of search: too costly to check here"):
        check_xml(to_xml(_round_trip(answer_first=False)), RUNTIMES["msccl-executor"])
