"""Runtime limits decided from the trees before an MSCCL program is built (solver.msccl.limits)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from solver import solve
from solver.cli import main
from solver.io import formats
from solver.model.topology import Link, Node, Topology
from solver.msccl import ExportOptions, check_file, export_xml
from solver.msccl.limits import check_fits, check_rank_count
from solver.msccl.runtimes import RUNTIMES, MscclError


def star(n: int) -> Topology:
    """n GPUs on one switch: the optimal trees have height 1, so each root sends to n-1 peers."""
    nodes = tuple(Node(f"g{i}", "compute", "gpu") for i in range(n)) + (
        Node("sw", "switch", "nvswitch"),
    )
    return Topology(f"star{n}", nodes, tuple(Link(f"g{i}", "sw", Fraction(100)) for i in range(n)))


@pytest.fixture(scope="module")
def star66():
    schedule = solve(star(66))
    assert max(t.height for t in schedule.trees) == 1  # what makes the fabric cross the limit
    return schedule


def test_rccl_threadblock_limit_is_named_before_building(star66):
    with pytest.raises(MscclError) as info:
        export_xml(star66, ExportOptions(RUNTIMES["rccl"]))
    text = str(info.value)
    assert "65 peers" in text and "MSCCL_MAX_NUM_THREAD_BLOCKS" in text
    assert "msccl_struct.h:18" in text and "\n" not in text


def test_the_executor_takes_the_same_schedule(star66):
    ranks = list(star66.topology.compute_ids)
    check_fits(star66, RUNTIMES["msccl-executor"], ranks)  # 1024 threadblocks per rank there
    check_fits(star66, RUNTIMES["msccl-legacy"], ranks)


def test_rank_count_limit():
    check_rank_count(1024, RUNTIMES["msccl-executor"])
    for runtime, cite in (
        ("msccl-executor", "msccl_parser.h:22"),
        ("rccl", "msccl_parser.h:22"),
        ("msccl-legacy", "xml.h:18"),
    ):
        with pytest.raises(MscclError, match="MAX_SUBS") as info:
            check_rank_count(1025, RUNTIMES[runtime])
        assert cite in str(info.value)


def test_the_cli_stops_with_one_line_when_told_not_to_shape(tmp_path, capsys):
    fabric = tmp_path / "star.json"
    formats.save(star(66), fabric)
    out = str(tmp_path / "x.xml")
    assert (
        main(["export", str(fabric), "--runtime", "rccl", "--shape-partners", "0", "-o", out]) == 2
    )
    err = capsys.readouterr().err
    assert (
        err.startswith("error: ") and err.count("\n") == 1 and "MSCCL_MAX_NUM_THREAD_BLOCKS" in err
    )
    assert not (tmp_path / "x.xml").exists()


def test_the_cli_exports_a_shaped_schedule_and_says_what_it_costs(tmp_path, capsys):
    fabric = tmp_path / "star.json"
    formats.save(star(66), fabric)
    out = tmp_path / "algos" / "x.xml"
    assert main(["export", str(fabric), "--runtime", "rccl", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "not written as solved: rank g0 sends to or receives from 65 peers" in text
    # windows of 5 GPUs (8 partners each) keep the star's 66 x 100 / 65 GB/s
    assert (
        "at most 8 partners per GPU on each: algbw 101.538 GB/s (exact 1320/13) against 101.538 GB/s unshaped (exact 1320/13), 0% less"
        in text
    )
    assert check_file(out, RUNTIMES["rccl"]).threadblocks == 9


def test_too_large_to_execute_is_refused_before_building(star66, monkeypatch):
    from solver.msccl import limits

    ranks = list(star66.topology.compute_ids)
    check_fits(star66, RUNTIMES["msccl-executor"], ranks)
    monkeypatch.setattr(limits.interpreter, "CLOCK_OPS", 1000)
    with pytest.raises(MscclError, match="too large for the symbolic execution") as info:
        check_fits(star66, RUNTIMES["msccl-executor"], ranks)
    assert "limits allow it" in str(info.value) and "\n" not in str(info.value)


def test_the_cli_shapes_to_fewer_partners_until_the_program_fits(tmp_path, capsys, monkeypatch):
    from dataclasses import replace

    # a runtime of 12 threadblocks per rank: 16 partners (17 threadblocks) do not fit, 8 do
    monkeypatch.setitem(RUNTIMES, "rccl", replace(RUNTIMES["rccl"], max_threadblocks=12))
    fabric = tmp_path / "star.json"
    formats.save(star(66), fabric)
    out = tmp_path / "algos" / "x.xml"
    assert (
        main(["export", str(fabric), "--runtime", "rccl", "--shape-partners", "16", "-o", str(out)])
        == 0
    )
    text = capsys.readouterr().out
    assert "not written: rank g0 sends to or receives from 16 peers" in text
    assert "shaping to 8 partners per GPU" in text and "at most 8 partners per GPU" in text
    assert check_file(out, RUNTIMES["rccl"]).threadblocks <= 12
