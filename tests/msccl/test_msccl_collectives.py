"""Every collective the runtimes' parsers accept is executed; rooted ones are verified for the root
they serve (MSCCL XML names no root), send/recv/alltoallv are executed but not verified."""

from __future__ import annotations

import re

import pytest

from solver.msccl import MscclError, check_xml
from solver.msccl.runtimes import RUNTIMES


def _step(s, kind, sbuf="i", soff=0, dbuf="o", doff=0, depid=-1, deps=-1, hasdep=0):
    return (
        f'<step s="{s}" type="{kind}" srcbuf="{sbuf}" srcoff="{soff}" dstbuf="{dbuf}" '
        f'dstoff="{doff}" cnt="1" depid="{depid}" deps="{deps}" hasdep="{hasdep}"/>'
    )


def _xml(coll, n, chunks, gpus, inplace=0):
    head = (
        f'<algo name="t" proto="Simple" nchannels="1" nchunksperloop="{chunks}" ngpus="{n}" '
        f'coll="{coll}" inplace="{inplace}" outofplace="{1 - inplace}" minBytes="0" maxBytes="0">'
    )
    return head + "".join(gpus) + "</algo>"


def _gpu(rank, i, o, tbs, s=0):
    body = "".join(
        f'<tb id="{k}" send="{send}" recv="{recv}" chan="0">{"".join(steps)}</tb>'
        for k, (send, recv, steps) in enumerate(tbs)
    )
    return f'<gpu id="{rank}" i_chunks="{i}" o_chunks="{o}" s_chunks="{s}">{body}</gpu>'


def broadcast(root=1, n=3, wrong=False):
    gpus = []
    for r in range(n):
        if r == root:
            tbs = [(p, -1, [_step(0, "s", "i", 0)]) for p in range(n) if p != r]
            tbs.append((-1, -1, [_step(0, "cpy", "i", 0, "o", 0)]))
        else:
            tbs = [(-1, root, [_step(0, "r", dbuf="o", doff=0)])]
        gpus.append(_gpu(r, 1, 1, tbs))
    text = _xml("broadcast", n, 1, gpus)
    return (
        text.replace('type="cpy" srcbuf="i" srcoff="0"', 'type="cpy" srcbuf="o" srcoff="0"')
        if wrong
        else text
    )


def reduce(root=0, n=3):
    gpus = []
    for r in range(n):
        if r == root:
            peers = [p for p in range(n) if p != r]
            tbs = [(-1, peers[0], [_step(0, "rrc", "i", 0, "o", 0, hasdep=1)])]
            tbs += [(-1, p, [_step(0, "rrc", "o", 0, "o", 0, depid=0, deps=0)]) for p in peers[1:]]
        else:
            tbs = [(root, -1, [_step(0, "s", "i", 0)])]
        gpus.append(_gpu(r, 1, 1, tbs))
    return _xml("reduce", n, 1, gpus)


def gather(root=0, n=3):
    gpus = []
    for r in range(n):
        if r == root:
            tbs = [(-1, p, [_step(0, "r", dbuf="o", doff=p)]) for p in range(n) if p != r]
            tbs.append((-1, -1, [_step(0, "cpy", "i", 0, "o", r)]))
            gpus.append(_gpu(r, 1, n, tbs))
        else:
            gpus.append(_gpu(r, 1, 0, [(root, -1, [_step(0, "s", "i", 0)])]))
    return _xml("gather", n, 1, gpus)


def scatter(root=2, n=3):
    gpus = []
    for r in range(n):
        if r == root:
            tbs = [(p, -1, [_step(0, "s", "i", p)]) for p in range(n) if p != r]
            tbs.append((-1, -1, [_step(0, "cpy", "i", r, "o", 0)]))
            gpus.append(_gpu(r, n, 1, tbs))
        else:
            gpus.append(_gpu(r, 0, 1, [(-1, root, [_step(0, "r", dbuf="o", doff=0)])]))
    return _xml("scatter", n, 1, gpus)


@pytest.mark.parametrize(
    "text, collective",
    [
        (broadcast(), "broadcast"),
        (broadcast(root=0), "broadcast"),
        (reduce(), "reduce"),
        (reduce(root=2), "reduce"),
        (gather(), "gather"),
        (gather(root=1), "gather"),
        (scatter(), "scatter"),
        (scatter(root=0), "scatter"),
    ],
)
def test_rooted_collectives_are_verified_for_the_root_they_serve(text, collective):
    report = check_xml(text, RUNTIMES["rccl"])
    assert report.collective == collective and report.verified
    assert "result verified" in report.summary()


@pytest.mark.parametrize(
    "text, message",
    [
        (
            broadcast(wrong=True),
            r"rank 1 tb 2 step 0 \(cpy\) reads o\[0\] before anything was written there",
        ),
        (
            reduce().replace(
                'srcbuf="o" srcoff="0" dstbuf="o"', 'srcbuf="i" srcoff="0" dstbuf="o"'
            ),
            r"wrong result: rank 0 output chunk 0 holds \{r0c0, r2c0\}, reduce needs \{r0c0, r1c0, r2c0\} "
            r"\(last written by rank 0 tb 1 step 0 \(rrc\)\)",
        ),
        (
            gather().replace('dstoff="1"', 'dstoff="2"', 1),
            r"rank 0 tb 1 step 0 \(r\) overwrites o\[2\] written by rank 0 tb 0 step 0 \(r\) without ordering",
        ),
        (
            scatter().replace('srcoff="1"', 'srcoff="0"', 1),
            r"wrong result: rank 1 output chunk 0 holds \{r2c0\}, scatter needs \{r2c1\} "
            r"\(last written by rank 1 tb 0 step 0 \(r\)\)",
        ),
    ],
)
def test_broken_rooted_collectives_fail_naming_rank_and_step(text, message):
    with pytest.raises(MscclError, match=message):
        check_xml(text, RUNTIMES["rccl"])


def test_send_recv_alltoallv_are_executed_but_not_verified():
    text = reduce().replace('coll="reduce"', 'coll="alltoallv"')
    report = check_xml(text, RUNTIMES["rccl"])
    assert not report.verified and "result not verified (run-time sizes)" in report.summary()
    # executed all the same: a deadlock is still found
    stuck = re.sub(r'type="s"', 'type="nop"', text, count=1)
    with pytest.raises(
        MscclError,
        match=r"deadlock after \d+ steps: rank 0 tb 0 step 0 \(rrc\) waits for a message",
    ):
        check_xml(stuck, RUNTIMES["rccl"])
    for coll in ("send", "recv"):
        assert not check_xml(
            text.replace('coll="alltoallv"', f'coll="{coll}"'), RUNTIMES["rccl"]
        ).verified


def test_legacy_has_no_gather_or_scatter():
    with pytest.raises(
        MscclError,
        match=r"coll 'gather' is not a msccl-legacy collective .*\[src/graph/topo.cc:826-845\]",
    ):
        check_xml(
            gather().replace('minBytes="0" maxBytes="0"', 'minBytes="0" maxBytes="10"'),
            RUNTIMES["msccl-legacy"],
        )
