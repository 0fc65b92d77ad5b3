"""check-xml on the MSCCL algorithms RCCL ships, on broken copies of them, and on hostile files.

tests/data/real/msccl/ holds every algorithm of ROCm/rccl's tools/msccl-algorithms/ and
tools/msccl-unit-test-algorithms/ (provenance in tests/data/real/README.md). Each must pass
``forestcoll check-xml --runtime rccl``. Broken copies are made here from the real files (a send
turned into a no-op, a wrong offset, a dependency cycle) and must fail with one line naming the
rank and step.
"""

from __future__ import annotations

import copy
import re
import time
from pathlib import Path

import pytest

from solver.cli import main
from solver.msccl import MscclError, check_xml, parse_xml, to_xml
from solver.msccl.interpreter import MAX_FILE_BYTES
from solver.msccl.runtimes import RUNTIMES

REAL = Path(__file__).parents[1] / "data" / "real" / "msccl"
FILES = sorted(REAL.glob("*.xml"))
BIG = 1_000_000  # bytes: the larger files take ~1.5 s each


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_shipped_algorithm_is_here():
    assert len(FILES) == 15
    names = {f.name for f in FILES}
    assert "alltoall-8n-0-9kb.xml" in names and "all-reduce-ring-simple.xml" in names


@pytest.mark.parametrize(
    "path",
    [pytest.param(f, marks=pytest.mark.slow) if f.stat().st_size > BIG else f for f in FILES],
    ids=lambda f: f.name,
)
def test_rccl_shipped_algorithm_passes_check_xml(path, capsys):
    code, out, err = _run(["check-xml", path, "--runtime", "rccl"], capsys)
    assert code == 0, err
    coll = re.search(r'coll="(\w+)"', path.read_text()[:2000]).group(1)
    expect = {"allreduce": "allreduce", "alltoall": "alltoall"}[coll]
    assert f"ok: {expect} on " in out and "result verified" in out
    # the unit-test rings use rrs/rcs/rrcs, which RCCL's launch refuses in builds without the
    # "full ops" kernels: a warning, not a failure (the file loads)
    if path.name.startswith("all-reduce-ring"):
        assert "warning: " in err and "msccl_setup.cc:430-437" in err
    else:
        assert err == ""


# ------------------------------------------------------------------ broken copies
def _steps(program, pred):
    for g in program.gpus:
        for tb in g.tbs:
            for st in tb.steps:
                if pred(g, tb, st):
                    yield g, tb, st


def _no_send(program):
    g, tb, st = next(_steps(program, lambda g, tb, st: g.id == 1 and st.type == "s"))
    st.type, st.depid, st.deps = "nop", -1, -1


def _wrong_offset(program):
    g, tb, st = next(_steps(program, lambda g, tb, st: g.id == 2 and st.type == "s"))
    st.srcoff = (st.srcoff + 1) % max(g.i_chunks, 1)


def _cycle(program):
    """tb 0 and tb 1 of rank 1 each wait for the other's last step before their first."""
    g = next(g for g in program.gpus if g.id == 1)
    a, b = g.tbs[0], g.tbs[1]
    a.steps[0].depid, a.steps[0].deps = b.id, len(b.steps) - 1
    b.steps[0].depid, b.steps[0].deps = a.id, len(a.steps) - 1
    a.steps[-1].hasdep = b.steps[-1].hasdep = 1


BROKEN = [
    (
        _no_send,
        r"deadlock after \d+ steps: rank \d+ tb \d+ step \d+ \(\w+\) waits for a message from rank 1",
    ),
    (
        _wrong_offset,
        r"wrong result: rank \d+ output chunk \d+ holds .* \(last written by rank \d+ tb \d+ step \d+",
    ),
    (
        _cycle,
        r"deadlock after \d+ steps: rank 1 tb [01] step \d+ \(\w+\) waits for tb [01] step \d+; rank 1 tb [01] step \d+ \(\w+\) waits for tb [01]",
    ),
]
SAMPLES = [
    "alltoall-8n-0-9kb.xml",
    "allreduce-allpairs-8n-ll-32tb.xml",
    "allreduce-allpairs-8n-ll-32tb-op.xml",
]


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("breaker, message", BROKEN, ids=["no-send", "wrong-offset", "cycle"])
def test_broken_copies_of_real_files_fail_naming_rank_and_step(
    name, breaker, message, tmp_path, capsys
):
    program = parse_xml((REAL / name).read_text())
    broken = copy.deepcopy(program)
    breaker(broken)
    path = tmp_path / name
    path.write_text(to_xml(broken))
    code, _, err = _run(["check-xml", path, "--runtime", "rccl"], capsys)
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1
    assert re.search(message, err), err
    # the unbroken file, written back the same way, passes: the failure is the mutation's
    path.write_text(to_xml(program))
    assert _run(["check-xml", path, "--runtime", "rccl"], capsys)[0] == 0


@pytest.mark.slow
def test_broken_ring_with_full_ops_fails_too(tmp_path, capsys):
    program = parse_xml((REAL / "all-reduce-ring-ll.xml").read_text())
    _no_send(program)
    path = tmp_path / "ring.xml"
    path.write_text(to_xml(program))
    code, _, err = _run(["check-xml", path, "--runtime", "rccl"], capsys)
    assert code == 2 and re.search(r"deadlock after \d+ steps: rank \d+ tb \d+ step \d+", err)


# ------------------------------------------------------------------ hostile sizes
HEADER = (
    '<algo name="x" proto="Simple" nchannels="1" nchunksperloop="{c}" ngpus="{n}" coll="allgather" '
    'inplace="0" outofplace="1" minBytes="0" maxBytes="0">'
)
GPU = (
    '<gpu id="{i}" i_chunks="1" o_chunks="2" s_chunks="{s}">'
    '<tb id="0" send="{p}" recv="{p}" chan="0">'
    '<step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="{i}" cnt="1" depid="-1" deps="-1" hasdep="0"/>'
    '<step s="1" type="r" srcbuf="i" srcoff="0" dstbuf="o" dstoff="{p}" cnt="1" depid="-1" deps="-1" hasdep="0"/>'
    '</tb><tb id="1" send="-1" recv="-1" chan="0">'
    '<step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="{i}" cnt="1" depid="-1" deps="-1" hasdep="0"/>'
    "</tb></gpu>"
)


def _small(c=2, n=2, s=0):
    """A 2-rank allgather (each rank sends its chunk to the other and copies its own)."""
    return (
        HEADER.format(c=c, n=n)
        + "".join(GPU.format(i=i, p=1 - i, s=s) for i in range(2))
        + "</algo>"
    )


@pytest.mark.parametrize(
    "text, message",
    [
        (
            _small(c=10_000_000),
            "needs buffers of 10000000 chunks; offsets are int16 (msccl_struct.h:44-45)",
        ),
        (_small(n=10_000_000_000), "ngpus=10000000000 does not fit the runtime's 32-bit integer"),
        (_small(n=1_000_000), "ngpus 1000000 must be between 1 and 1024"),
        (_small(s=10**15), "s_chunks=1000000000000000 does not fit the runtime's 32-bit integer"),
        (_small(s=10**30), "s_chunks='1" + "0" * 30 + "' is not a decimal integer"),
        (_small().replace('name="x"', 'name="' + "a" * 300 + '"'), "is 300 bytes"),
        ('<!DOCTYPE algo [<!ENTITY a "aaaa">]>' + _small(), "DOCTYPE/ENTITY declarations"),
        ('<?xml version="1.0"?>' + _small(), "starts with an XML declaration"),
    ],
)
def test_hostile_sizes_are_refused_quickly_naming_the_limit(text, message):
    start = time.perf_counter()
    with pytest.raises(MscclError, match=re.escape(message)):
        check_xml(text, RUNTIMES["rccl"])
    assert time.perf_counter() - start < 30  # minutes and gigabytes before the limits


def test_small_hostile_file_is_fine_with_huge_scratch():
    # s_chunks is never allocated (memory is sparse), so a big one costs nothing
    report = check_xml(_small(s=1_000_000_000), RUNTIMES["rccl"])
    assert report.collective == "allgather"


def test_file_size_is_capped_before_reading(tmp_path, capsys):
    path = tmp_path / "big.xml"
    with open(path, "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is written
    start = time.perf_counter()
    code, _, err = _run(["check-xml", path], capsys)
    assert (
        code == 2
        and f"larger than the {MAX_FILE_BYTES // 2**20} MB limit for an MSCCL XML file" in err
    )
    assert MAX_FILE_BYTES == 256 * 2**20  # room for the 1024-rank allgather (245 MiB)
    assert time.perf_counter() - start < 30  # minutes and gigabytes before the limits


def test_dependency_on_step_minus_one_waits_for_the_first_flag():
    """depid >= 0 with deps=-1: the kernel waits for any flag of this work item (its compare
    includes the work index, msccl_kernel_impl.h:279); found by mutating real files."""
    text = _small()
    text = text.replace(
        '<step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1"',
        '<step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="0"',
    )
    with pytest.raises(
        MscclError,
        match=r"deadlock after \d+ steps: rank 0 tb 1 step 0 \(cpy\) waits for tb 0 step -1",
    ):
        check_xml(text, RUNTIMES["rccl"])
    signalled = text.replace(
        'type="r" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"',
        'type="r" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="1"',
    )
    assert check_xml(signalled, RUNTIMES["rccl"]).collective == "allgather"


def test_random_mutations_of_a_real_file_give_one_line_errors():
    """Values swapped at random in a real file: every outcome is a pass or one MscclError line."""
    import random

    rng = random.Random(3)
    base = (REAL / "alltoall-8n-0-9kb.xml").read_text()
    values = [
        "-1",
        "0",
        "1",
        "7",
        "8",
        "63",
        "64",
        "72",
        "128",
        "32768",
        "99999999999",
        "",
        "x",
        "010",
    ]
    words = ["s", "r", "rrc", "re", "nop", "q", "o", "allgather", "broadcast", "alltoallv", "LL"]
    outcomes = {"pass": 0, "error": 0}
    for _ in range(60):
        text = base
        for _ in range(rng.randint(1, 3)):
            spans = [m.span(1) for m in re.finditer(r'"([^"]*)"', text)]
            a, b = rng.choice(spans)
            new = rng.choice(values) if re.fullmatch(r"-?\d+", text[a:b]) else rng.choice(words)
            text = text[:a] + new + text[b:]
        try:
            check_xml(
                text,
                rng.choice(
                    [RUNTIMES["rccl"], RUNTIMES["msccl-executor"], RUNTIMES["msccl-legacy"]]
                ),
            )
            outcomes["pass"] += 1
        except MscclError as exc:
            assert "\n" not in str(exc)
            outcomes["error"] += 1
    assert outcomes["error"] > 30


def test_what_the_runtime_reader_cannot_read_is_refused(tmp_path, capsys):
    good = _small()
    cases = [
        (b"\xef\xbb\xbf" + good.encode(), "starts with a UTF-8 byte-order mark"),
        (
            good.replace('<tb id="0" send', '<tb\tid="0" send', 1).encode(),
            "a tab between XML tokens (line 1)",
        ),
        (good.encode()[:-20] + b"\xff\xfe", "not UTF-8 text"),
    ]
    for data, message in cases:
        path = tmp_path / "x.xml"
        path.write_bytes(data)
        code, _, err = _run(["check-xml", path], capsys)
        assert code == 2 and message in err and err.count("\n") == 1, err
    # tabs inside comments and attribute values are not between tokens
    fine = good.replace('name="x"', 'name="a\tb"').replace("<gpu", "<!-- \t --><gpu", 1)
    assert check_xml(fine, RUNTIMES["rccl"]).collective == "allgather"
    assert _run(["check-xml", tmp_path / "nothing.xml"], capsys)[0] == 2
    assert _run(["check-xml", tmp_path], capsys)[0] == 2
