"""MSCCL XML export: every exported XML passes the checker; broken XMLs fail with clear messages."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from bfs_schedules import bfs_schedule

import solver
from solver.io.templates import dgx_a100, mi250, ring
from solver.msccl import (
    ExportOptions,
    MscclError,
    build_program,
    check_file,
    check_xml,
    export_xml,
    parse_xml,
    to_xml,
    write_xml,
)
from solver.msccl.runtimes import RUNTIMES

DATA = Path(__file__).parents[1] / "data"
COLLECTIVES = ("allgather", "reduce-scatter", "allreduce")

_SOLVED: dict = {}


def solved(name: str, collective: str, k):
    key = (name, collective, k)
    if key not in _SOLVED:
        topo = {"dgx2": dgx_a100(2), "mi2": mi250(2)}[name]
        _SOLVED[key] = solver.solve(topo, collective, max_trees_per_root=k)
    return _SOLVED[key]


# ------------------------------------------------------------------ exported XMLs pass
@pytest.mark.parametrize("fabric", ["dgx2", "mi2"])
@pytest.mark.parametrize("collective", COLLECTIVES)
@pytest.mark.parametrize("runtime", list(RUNTIMES))
def test_solved_k1_exports_pass_checker(fabric, collective, runtime):
    s = solved(fabric, collective, 1)
    text = export_xml(s, ExportOptions(RUNTIMES[runtime]))  # checks; check again explicitly
    report = check_xml(text, RUNTIMES[runtime])
    root = ET.fromstring(text)
    n = len(s.topology.compute_ids)
    assert report.ngpus == n and root.get("ngpus") == str(n)
    legacy = RUNTIMES[runtime].legacy  # reads only inplace= (src/graph/tuning.cc:356)
    assert report.modes == (("in-place",) if legacy else ("out-of-place", "in-place"))
    assert root.get("coll") == RUNTIMES[runtime].coll_name(collective)
    for attr in (
        "name",
        "proto",
        "nchannels",
        "nchunksperloop",
        "inplace",
        "outofplace",
        "minBytes",
        "maxBytes",
    ):
        assert root.get(attr) is not None
    # K=1: one chunk per rank shard
    assert int(root.get("nchunksperloop")) == n
    assert report.max_steps <= RUNTIMES[runtime].max_steps
    assert report.threadblocks <= RUNTIMES[runtime].max_threadblocks


def test_reduce_scatter_names_per_runtime():
    s = solved("dgx2", "reduce-scatter", 1)
    assert 'coll="reducescatter"' in export_xml(s, ExportOptions(RUNTIMES["msccl-executor"]))
    assert 'coll="reducescatter"' in export_xml(s, ExportOptions(RUNTIMES["rccl"]))
    assert 'coll="reduce_scatter"' in export_xml(s, ExportOptions(RUNTIMES["msccl-legacy"]))


def test_optimal_k_schedule_exports_with_chunk_ranges():
    s = solved("dgx2", "allgather", None)
    assert s.k == 13
    program = build_program(s, ExportOptions(RUNTIMES["msccl-executor"]))
    assert program.nchunksperloop == 16 * 13
    report = check_xml(to_xml(program), RUNTIMES["msccl-executor"])
    assert report.max_steps <= 64
    # a tree of multiplicity m sends its m chunks as one step
    counts = {st.cnt for g in program.gpus for tb in g.tbs for st in tb.steps if st.type == "s"}
    assert max(counts) > 1


def test_hand_made_schedules_all_collectives_and_instances():
    for topo in (ring(4), dgx_a100(2)):
        for coll in COLLECTIVES:
            s = bfs_schedule(topo, coll)
            for instances in (1, 2):
                text = export_xml(
                    s, ExportOptions(RUNTIMES["msccl-executor"], instances=instances, proto="LL128")
                )
                root = ET.fromstring(text)
                assert root.get("proto") == "LL128"
                assert int(root.get("nchunksperloop")) == len(topo.compute_ids) * instances


def test_multiplicity_chunks_and_scratch():
    s = bfs_schedule(dgx_a100(2), "reduce-scatter", multiplicity=3)
    program = build_program(s)
    assert program.nchunksperloop == 16 * 3
    assert any(g.s_chunks > 0 for g in program.gpus)
    assert {
        st.cnt for g in program.gpus for tb in g.tbs for st in tb.steps if st.type != "nop"
    } == {3}
    check_xml(to_xml(program))


def test_rank_order_is_applied_and_checked(tmp_path):
    topo = ring(4)
    s = bfs_schedule(topo)
    order = list(reversed(topo.compute_ids))
    text = export_xml(s, ExportOptions(order=order))
    check_xml(text)
    default = export_xml(s)
    assert text != default
    with pytest.raises(MscclError, match="misses compute node"):
        build_program(s, ExportOptions(order=order[:3]))
    with pytest.raises(MscclError, match="not a compute node"):
        build_program(s, ExportOptions(order=order[:3] + ["nope"]))
    with pytest.raises(MscclError, match="twice"):
        build_program(s, ExportOptions(order=order[:3] + order[:1]))


def test_limits_are_named_when_the_schedule_cannot_fit():
    from dataclasses import replace

    # few steps per threadblock: connections spread over more channels, until channels run out
    real = RUNTIMES["msccl-executor"]
    tiny = replace(real, max_steps=4, max_channels=3)
    s = solved("dgx2", "allreduce", None)
    with pytest.raises(
        MscclError,
        match=r"channels, more than the msccl-executor limit 3 \(MAXCHANNELS, src/include/device.h:65 "
        r".*\); export a schedule with fewer trees \(--max-trees-per-root 1; this one has k=13\)",
    ):
        build_program(s, ExportOptions(tiny))
    roomy = replace(real, max_steps=4)
    report = check_xml(to_xml(build_program(s, ExportOptions(roomy))), roomy)
    assert report.max_steps <= 4 and report.nchannels > 3
    few_tbs = replace(real, max_threadblocks=2)
    with pytest.raises(
        MscclError,
        match=r"threadblocks, more than the msccl-executor limit 2 \(MSCCL_MAX_NUM_THREAD_BLOCKS",
    ):
        build_program(solved("dgx2", "allgather", 1), ExportOptions(few_tbs))


def test_xml_element_limit_is_named():
    from dataclasses import replace

    small = replace(RUNTIMES["rccl"], max_nodes=20)
    with pytest.raises(
        MscclError, match=r"XML elements, more than the rccl reader keeps \(19; MAX_NODES"
    ):
        build_program(solved("dgx2", "allreduce", 1), ExportOptions(small))


def test_write_xml_is_checked_and_atomic(tmp_path):
    out = tmp_path / "ag.xml"
    report = write_xml(out, bfs_schedule(ring(4)), ExportOptions(RUNTIMES["rccl"]))
    assert out.exists() and "ok: allgather" in report.summary()
    check_file(out, RUNTIMES["rccl"])
    (tmp_path / "plain").write_text("a file, not a folder")
    with pytest.raises(MscclError, match="cannot write"):
        write_xml(tmp_path / "plain" / "ag.xml", bfs_schedule(ring(4)))


def test_xml_round_trip_through_parser():
    text = export_xml(bfs_schedule(ring(4), "allreduce"))
    assert "<!-- ranks: 0=" in text  # the rank order is recorded for the user
    without_comments = "".join(ln + "\n" for ln in text.splitlines() if "<!--" not in ln)
    assert to_xml(parse_xml(text)) == without_comments


# ------------------------------------------------------------------ hand-broken XMLs fail
@pytest.mark.parametrize(
    "name",
    [
        "msccl_ok_ring_allgather.xml",
        "msccl_ok_ring_allgather_deps.xml",
        "msccl_ok_reduce_scatter2.xml",
    ],
)
def test_hand_written_good_xmls_pass(name):
    check_file(DATA / name, RUNTIMES["msccl-executor"])


@pytest.mark.parametrize(
    "name, message",
    [
        (
            "msccl_wrong_peer.xml",
            r"gpu 1 tb 0: sends to 0 on channel 0 but gpu 0 has no threadblock receiving from 1 "
            r".*\[msccl_setup.cc:110-117\]",
        ),
        # depending on the interleaving the read comes before the write or races with it
        (
            "msccl_missing_dep.xml",
            (
                r"rank 0 tb 1 step 1 \(s\) reads o\[2\] (before anything was written there|written by "
                r"rank 0 tb 0 step 0 with no dependency)"
            ),
        ),
        (
            "msccl_deadlock.xml",
            r"deadlock after 2 steps: rank 0 tb 0 step 0 \(r\) waits for a message from rank 1",
        ),
        (
            "msccl_self_send.xml",
            r"gpu 0 tb 0: send peer is the rank itself \(0\) \[msccl_parser.cc:431\]",
        ),
        (
            "msccl_cnt_too_big.xml",
            r"cnt 72 must be between 0 and 71 \[src/include/msccl/msccl_struct.h:19, "
            r"msccl_parser.cc:577\] \(and 14 more like it\)",
        ),
        (
            "msccl_wrong_result.xml",
            r"wrong result: rank 1 output chunk 1 holds nothing, allgather needs \{r1c0\}",
        ),
        ("msccl_double_count.xml", r"adds the contribution of rank 1 chunk 1 twice"),
    ],
)
def test_broken_xmls_fail_clearly(name, message):
    with pytest.raises(MscclError, match=message) as info:
        check_file(DATA / name, RUNTIMES["msccl-executor"])
    assert "\n" not in str(info.value)


def _mutate(text: str, pattern: str, repl: str, count: int = 1) -> str:
    new, n = re.subn(pattern, repl, text, count=count)
    assert n == count
    return new


@pytest.fixture(scope="module")
def good_text():
    return export_xml(bfs_schedule(ring(4), "allreduce"))


def test_checker_rules_on_mutations(good_text):
    """Each rule names its element and cites the runtime source it mirrors."""
    cases = [
        ('coll="allreduce"', 'coll="allfoo"', "coll 'allfoo' is not a msccl-executor collective"),
        (
            'proto="Simple"',
            'proto="Fast"',
            "proto 'Fast' is not one of Simple, LL, LL128 [msccl_parser.cc:290-301]",
        ),
        (
            '<tb id="1"',
            '<tb id="5"',
            "threadblock 4 is missing (ids must be 0, 1, 2...) [msccl_parser.cc:684-696]",
        ),
        ('chan="0"', 'chan="40"', "chan 40 must be between 0 and 31"),
        (
            ' s="1" ',
            ' s="64" ',
            "s=64 must be between 0 and 63 (MSCCL_MAX_NUM_STEPS 64) [makefiles/common.mk:19",
        ),
        ('type="rrc"', 'type="xx"', "unknown type 'xx' [msccl_parser.cc:499-543]"),
        (
            'cnt="1"',
            'cnt="72"',
            "cnt 72 must be between 0 and 71 [src/include/msccl/msccl_struct.h:19, msccl_parser.cc:577]",
        ),
        (
            'o_chunks="4"',
            'o_chunks="3"',
            "outside buffer 'o', which declares 3 chunks [msccl_parser.cc:270-288, 610-611]",
        ),
        ('send="1"', 'send="9"', "send peer 9 is not a rank 0..3"),
        (
            'depid="-1"',
            'depid="200"',
            "do not fit the int8/int16 fields dependentBid/dependentStep [msccl_struct.h:58-59]",
        ),
        (
            'srcoff="0"',
            'srcoff="010"',
            "srcoff='010' has a leading zero, which strtol base 0 reads as octal",
        ),
        ('srcoff="0"', 'srcoff="0x1"', "srcoff='0x1' is not a decimal integer"),
        (
            'ngpus="4"',
            'ngpus="99999999999"',
            "ngpus=99999999999 does not fit the runtime's 32-bit integer",
        ),
        ('ngpus="4"', 'ngpus="5000"', "ngpus 5000 must be between 1 and 1024"),
        (
            'nchunksperloop="4"',
            'nchunksperloop="0"',
            "nchunksperloop 0 must be >= 1 (the runtime divides by it)",
        ),
        (
            'maxBytes="0"',
            'maxBytes="99999999999999999999"',
            "does not fit the runtime's 64-bit integer",
        ),
        ('<gpu id="3"', '<gpu id="2"', "no <gpu> for rank 3"),
        ('send="1"', 'send="-2"', "send peer -2 must be -1 or a rank [msccl_parser.cc:437]"),
    ]
    for pattern, repl, message in cases:
        with pytest.raises(MscclError, match=re.escape(message)) as info:
            check_xml(_mutate(good_text, pattern, repl), RUNTIMES["msccl-executor"])
        assert str(info.value).startswith("<xml>: ")


def test_what_the_runtime_accepts_passes(good_text):
    """maxBytes 0 = no upper limit, any minBytes, one mode only, unused scratch: all loadable."""
    for pattern, repl in [
        ('maxBytes="0"', 'maxBytes="0"'),
        ('minBytes="0"', 'minBytes="-5"'),
        ('inplace="1"', 'inplace="0"'),
        ('s_chunks="0"', 's_chunks="1000000000"'),  # never allocated: memory is sparse
    ]:
        report = check_xml(_mutate(good_text, pattern, repl), RUNTIMES["msccl-executor"])
        assert report.notes == []
    both_off = _mutate(
        _mutate(good_text, 'inplace="1"', 'inplace="0"'), 'outofplace="1"', 'outofplace="0"'
    )
    report = check_xml(both_off, RUNTIMES["msccl-executor"])
    assert report.modes == () and "never picks this algorithm" in report.notes[0]
    moved = _mutate(good_text, ' s="1" ', ' s="7" ')
    assert "the kernel numbers steps by position" in check_xml(moved).notes[0]
    # legacy: minBytes < 0 is refused by its loader
    legacy = _mutate(
        good_text.replace('coll="allreduce"', 'coll="allreduce"'), 'minBytes="0"', 'minBytes="-5"'
    )
    with pytest.raises(
        MscclError, match=re.escape("minBytes -5 is negative [src/graph/topo.cc:811]")
    ):
        check_xml(legacy, RUNTIMES["msccl-legacy"])


def test_checker_rejects_malformed_and_missing_attributes(tmp_path):
    with pytest.raises(MscclError, match=r"line 1: the file ends inside a tag"):
        check_xml('<algo name="x"')
    with pytest.raises(MscclError, match="missing attribute 'outofplace'"):
        check_xml(
            '<algo name="x" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allgather" '
            'inplace="1" minBytes="0" maxBytes="10"/>'
        )
    with pytest.raises(MscclError, match="no such file"):
        check_file(tmp_path / "none.xml")


def test_legacy_allows_more_steps_than_executor():
    s = solved("mi2", "allreduce", 2)
    legacy = build_program(s, ExportOptions(RUNTIMES["msccl-legacy"]))
    executor = build_program(s, ExportOptions(RUNTIMES["msccl-executor"]))
    assert legacy.max_steps() > 64 >= executor.max_steps()
    with pytest.raises(
        MscclError, match=r"s=64 must be between 0 and 63 \(MSCCL_MAX_NUM_STEPS 64\)"
    ):
        check_xml(
            to_xml(legacy).replace('coll="allreduce"', 'coll="allreduce"'),
            RUNTIMES["msccl-executor"],
        )


def test_malformed_schedules_refused():
    from dataclasses import replace

    s = bfs_schedule(ring(4))
    t0 = s.trees[0]
    flipped = replace(
        t0, edges=tuple(type(e)(e.dst, e.src, tuple(reversed(e.path))) for e in t0.edges)
    )
    with pytest.raises(MscclError, match="points the wrong way"):
        build_program(replace(s, trees=(flipped,) + s.trees[1:]))
    short = replace(t0, edges=t0.edges[:-1])
    with pytest.raises(MscclError, match="does not span the compute nodes"):
        build_program(replace(s, trees=(short,) + s.trees[1:]))
    # edges in any order are fine (not only breadth-first)
    shuffled = replace(t0, edges=tuple(reversed(t0.edges)))
    check_xml(to_xml(build_program(replace(s, trees=(shuffled,) + s.trees[1:]))))


@pytest.mark.parametrize("collective", ["reduce-scatter", "allreduce"])
def test_rccl_exports_avoid_full_ops(collective):
    """RCCL's launch refuses rrc/rcs/rrs/rrcs (msccl_setup.cc:430-437): its exports receive into
    scratch and reduce with re; msccl-executor keeps the single rrc step."""
    s = solved("mi2", collective, 1)
    rccl = export_xml(s, ExportOptions(RUNTIMES["rccl"]))
    assert not re.search(r'type="(rrc|rcs|rrs|rrcs)"', rccl)
    assert 'type="re"' in rccl and check_xml(rccl, RUNTIMES["rccl"]).notes == []
    executor = export_xml(s, ExportOptions(RUNTIMES["msccl-executor"]))
    assert 'type="rrc"' in executor and 'type="re"' not in executor
    # the same XML with full ops would load in RCCL but be refused at launch: a warning
    report = check_xml(
        executor.replace('coll="reducescatter"', 'coll="reducescatter"'), RUNTIMES["rccl"]
    )
    assert any("full op" in note for note in report.notes)


def test_ids_that_xml_cannot_hold_are_escaped_when_writing(tmp_path):
    """Lone surrogates and control characters in ids or names are written as \\uXXXX, so the
    file is valid UTF-8 XML 1.0 that reads back; the name fits the runtimes' 255-byte buffer."""
    from solver.model.topology import Link, Node, Topology

    base = ring(4)
    rename = {
        old: new for old, new in zip(base.compute_ids, ["g\ud800", "g\x01b", "g\x1b[2J", "g3"])
    }

    def rid(x):
        return rename.get(x, x)

    topo = Topology(
        "evil\ud800\x01" + "n" * 400,
        tuple(Node(rid(n.id), n.kind, n.role) for n in base.nodes),
        tuple(Link(rid(ln.source), rid(ln.target), ln.bandwidth) for ln in base.links),
    )
    path = tmp_path / "x.xml"
    write_xml(path, bfs_schedule(topo, "allreduce"), ExportOptions(RUNTIMES["rccl"]))
    raw = path.read_bytes()
    text = raw.decode("utf-8")  # strict: no surrogate made it into the file
    assert "0=g\\ud800" in text and "1=g\\u0001b" in text and "2=g\\u001b[2J" in text
    assert not any(ord(c) < 0x20 and c not in "\n" for c in text)
    name = ET.fromstring(text).get("name")
    assert len(name) <= 254 and name.startswith("forestcoll allreduce evil\\ud800\\u0001")
    check_file(path, RUNTIMES["rccl"])
