"""The deadlock model on streamed ``cnt > 1`` transmissions follows the kernel.

The kernel moves a transmission of ``cnt`` chunks as ceil(cnt / maxAllowedCount) calls, each
waiting for connection room or data on its own (RCCL msccl_kernel_impl.h:290-303,
prims_simple.h:112-127, 362-380); maxAllowedCount is 1 for large messages (msccl_setup.cc:60). So
both ranks sending one ``cnt=3`` step over a 2-call Simple connection and then receiving deadlock
exactly like the same data sent as three ``cnt=1`` steps (the checker used to pass the first).
"""

from __future__ import annotations

import pytest

from solver.msccl import MscclError, check_xml, parse_xml
from solver.msccl.interpreter import connection_pieces, max_allowed_count
from solver.msccl.runtimes import RUNTIMES

HEAD = (
    '<algo name="x" proto="{proto}" nchannels="1" nchunksperloop="6" ngpus="2" coll="allgather" '
    'inplace="0" outofplace="1" minBytes="0" maxBytes="{max_bytes}">'
)
ROW = '<step s="{s}" type="{t}" srcbuf="{sb}" srcoff="{so}" dstbuf="o" dstoff="{do}" cnt="{c}" depid="-1" deps="-1" hasdep="0"/>'


def _program(split: bool, proto="Simple", max_bytes=0) -> str:
    """Each rank sends its 3 chunks to the other, then receives the other's 3."""
    gpus = []
    for i in range(2):
        p = 1 - i
        if split:
            rows = [("s", "i", k, 3 * i + k, 1) for k in range(3)] + [
                ("r", "i", 0, 3 * p + k, 1) for k in range(3)
            ]
        else:
            rows = [("s", "i", 0, 3 * i, 3), ("r", "i", 0, 3 * p, 3)]
        steps = "".join(
            ROW.format(s=n, t=t, sb=sb, so=so, do=do, c=c)
            for n, (t, sb, so, do, c) in enumerate(rows)
        )
        gpus.append(
            f'<gpu id="{i}" i_chunks="3" o_chunks="6" s_chunks="0"><tb id="0" send="{p}" recv="{p}" chan="0">{steps}</tb>'
            f'<tb id="1" send="-1" recv="-1" chan="0">{ROW.format(s=0, t="cpy", sb="i", so=0, do=3 * i, c=3)}</tb></gpu>'
        )
    return HEAD.format(proto=proto, max_bytes=max_bytes) + "".join(gpus) + "</algo>"


@pytest.mark.parametrize("split", [False, True], ids=["one-cnt3-step", "three-cnt1-steps"])
def test_send_then_receive_of_three_chunks_deadlocks_both_ways(split):
    with pytest.raises(
        MscclError,
        match=r"deadlock after \d+ steps: rank 0 tb 0 step \d \(s\).* waits for rank 1 to receive",
    ):
        check_xml(_program(split), RUNTIMES["rccl"])
    # a connection of three calls would hold it (the override is in calls)
    assert check_xml(_program(split), RUNTIMES["rccl"], fifo_capacity=3).collective == "allgather"


def test_the_streamed_send_is_reported_at_its_piece():
    with pytest.raises(
        MscclError, match=r"rank 0 tb 0 step 0 \(s\) at piece 3 of 3 waits for rank 1 to receive"
    ):
        check_xml(_program(False), RUNTIMES["msccl-executor"])


def test_small_messages_move_the_three_chunks_in_one_call():
    # maxBytes 6 KiB over 6 chunks: 1 KiB per chunk, maxAllowedCount 71 -> cnt=3 is one call,
    # which fits the connection; three cnt=1 steps are still three calls and deadlock
    assert check_xml(_program(False, max_bytes=6144), RUNTIMES["rccl"]).collective == "allgather"
    with pytest.raises(MscclError, match="deadlock"):
        check_xml(_program(True, max_bytes=6144), RUNTIMES["rccl"])


def test_ll_connections_hold_eight_calls():
    assert check_xml(_program(False, proto="LL"), RUNTIMES["rccl"]).collective == "allgather"
    assert check_xml(_program(True, proto="LL"), RUNTIMES["rccl"]).collective == "allgather"


def test_max_allowed_count_follows_msccl_setup():
    rccl, executor = RUNTIMES["rccl"], RUNTIMES["msccl-executor"]
    p = parse_xml(_program(False))
    assert max_allowed_count(rccl, p, "allgather") == 1  # maxBytes 0: no upper limit
    # RCCL's allpairs Simple: maxBytes 11534336 over 512 chunks = 22528 B; chunk 4 MiB/8 x 4 = 2 MiB
    p.proto, p.max_bytes, p.nchunksperloop = "Simple", 11534336, 512
    assert max_allowed_count(rccl, p, "allreduce") == min(2 * 2**20 // 22528, 71) == 71
    p.max_bytes = 512 * 2**20  # 1 MiB per chunk: 2 chunks per call
    assert max_allowed_count(rccl, p, "allreduce") == 2
    assert max_allowed_count(rccl, p, "broadcast") == 1  # chunkSteps 1: 512 KiB per call
    p.proto = "LL"  # 8 x 256 x 8 x 16 B / 8 steps / 2 = 16 KiB on RCCL, 32 KiB on the executor
    p.max_bytes = 512 * 8192
    assert max_allowed_count(rccl, p, "allreduce") == 2
    assert max_allowed_count(executor, p, "allreduce") == 4
    p.proto = "LL128"  # 28 x 256 x 8 x 8 / 8 = 57344 -> 7/8 = 50176 B (RCCL's 64-byte lines)
    p.max_bytes = 512 * 25088
    assert max_allowed_count(rccl, p, "allreduce") == 2
    assert connection_pieces("Simple") == 2 and connection_pieces("LL") == 8 == connection_pieces(
        "LL128"
    )


def test_forwarding_streams_piece_by_piece():
    """rank 0 sends cnt=3 to rank 1, which forwards it (rcs) to rank 2 before rank 2 receives
    anything: the forwarder needs room for one piece at a time, so it runs."""
    head = (
        '<algo name="x" proto="Simple" nchannels="1" nchunksperloop="3" ngpus="3" coll="broadcast" '
        'inplace="0" outofplace="1" minBytes="0" maxBytes="0">'
    )
    row = '<step s="0" type="{t}" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="3" depid="-1" deps="-1" hasdep="0"/>'
    text = (
        head
        + (
            f'<gpu id="0" i_chunks="3" o_chunks="3" s_chunks="0"><tb id="0" send="1" recv="-1" chan="0">{row.format(t="s")}</tb>'
            f'<tb id="1" send="-1" recv="-1" chan="0">{row.format(t="cpy")}</tb></gpu>'
            f'<gpu id="1" i_chunks="3" o_chunks="3" s_chunks="0"><tb id="0" send="2" recv="0" chan="0">{row.format(t="rcs")}</tb></gpu>'
            f'<gpu id="2" i_chunks="3" o_chunks="3" s_chunks="0"><tb id="0" send="-1" recv="1" chan="0">{row.format(t="r")}</tb></gpu>'
        )
        + "</algo>"
    )
    report = check_xml(text, RUNTIMES["rccl"])
    assert report.collective == "broadcast" and report.steps_executed == 4
