"""``forestcoll info`` at scale: the capability bounds are skipped above a size with a note saying
how to get them, long steps are reported on stderr, long lists are cut short; the exact sums
and the fast number paths agree with the slow ones."""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from solver.cli import info as info_cli
from solver.cli import main
from solver.io import templates as T
from solver.io import v1
from solver.io.untrusted import nesting_depth
from solver.model.errors import TopologyError
from solver.model.values import bounded_float

ROOT = Path(__file__).resolve().parents[2]
H100_2X = ROOT / "sample_topologies" / "dgx_h100_rail_2x.json"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_bounds_skipped_above_the_size_with_a_note(capsys, monkeypatch):
    monkeypatch.setattr(info_cli, "BOUNDS_MAX_COMPUTE", 8)  # the 2-box file has 16 GPUs
    code, out, err = run(capsys, "info", H100_2X)
    assert code == 0 and err == ""
    assert "algbw bounds:" not in out
    assert (
        "reduce/multicast: b0.nvsw, b1.nvsw; allreduce bounds not computed: 16 compute nodes, "
        "over 8 (forestcoll info --bounds FILE computes them" in out
    )
    doc = json.loads(run(capsys, "info", H100_2X, "--json")[1])
    assert doc["allreduce_bounds_gbps"] is None
    assert doc["allreduce_bounds_error"].startswith("16 compute nodes, over 8")
    # --bounds computes them anyway
    code, out, _ = run(capsys, "info", H100_2X, "--bounds")
    assert "any-schedule bound (whatever switches do): 400.00 GB/s" in out


def test_no_bounds_skips_them_at_any_size(capsys):
    code, out, _ = run(capsys, "info", H100_2X, "--no-bounds")
    assert code == 0 and "algbw bounds:" not in out and "bounds not computed" in out


def test_solve_says_how_to_get_skipped_bounds(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(info_cli, "BOUNDS_MAX_COMPUTE", 4)
    path = tmp_path / "h100.json"
    path.write_text(v1.dumps(T.make("dgx_h100_rail", n=1)), encoding="utf-8")
    code, out, _ = run(capsys, "solve", path)
    assert code == 0
    assert "allgather bounds:\n    8 compute nodes, over 4 (forestcoll info --bounds FILE" in out


def test_large_fabrics_report_their_steps_on_stderr(capsys, monkeypatch):
    monkeypatch.setattr(info_cli, "PROGRESS_MIN_NODES", 10)
    monkeypatch.setattr(info_cli, "PROGRESS_MIN_BYTES", 100)
    code, out, err = run(capsys, "info", H100_2X)
    assert code == 0 and "compute nodes:    16" in out
    lines = err.splitlines()
    assert lines[0].startswith(f"info: reading {H100_2X} ... ") and lines[0].endswith(" s")
    steps = [line.split(" ...")[0] for line in lines]
    assert steps == [
        f"info: reading {H100_2X}",
        "info: checking the fabric",
        "info: link bandwidths",
        "info: connectivity",
        "info: library",
        "info: allreduce capability bounds",
        "info: scale-up check",
    ]


def test_small_fabrics_print_no_steps(capsys):
    assert run(capsys, "info", H100_2X)[2] == ""


def test_many_unbalanced_switches_are_cut_short(capsys, tmp_path):
    count = info_cli.UNBALANCED_SHOWN + 5
    nodes = [{"id": "a", "kind": "compute"}, {"id": "b", "kind": "compute"}]
    nodes += [{"id": f"w{i}", "kind": "switch"} for i in range(count)]
    links = [{"source": "a", "target": "b", "bandwidth": 1}]
    for i in range(count):
        links.append({"source": "a", "target": f"w{i}", "bandwidth": 2, "directed": True})
        links.append({"source": f"w{i}", "target": "b", "bandwidth": 1, "directed": True})
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            {
                "format": "forestcoll-topology",
                "version": 1,
                "name": "t",
                "nodes": nodes,
                "links": links,
            }
        )
    )
    code, out, _ = run(capsys, "info", path)
    assert f"{count} unbalanced switch(es)" in out
    assert "w19: in 2 GB/s, out 1 GB/s" in out and "w20:" not in out
    assert "and 5 more (--json lists them all)" in out
    doc = json.loads(run(capsys, "info", path, "--json")[1])
    assert len(doc["unbalanced_switches"]) == count


def test_node_sums_are_exact():
    caps = {
        ("a", "w"): Fraction(1, 3),
        ("b", "w"): Fraction(1, 6),
        ("c", "w"): Fraction(5),
        ("w", "a"): Fraction(7, 2),
    }
    into, out = info_cli._node_sums(caps)
    assert into == {"w": Fraction(11, 2), "a": Fraction(7, 2)}
    assert out == {"a": Fraction(1, 3), "b": Fraction(1, 6), "c": Fraction(5), "w": Fraction(7, 2)}


@pytest.mark.parametrize(
    "value", [0, 7, -3, 10**6, Decimal("12.5"), Decimal("-0.1"), Decimal("1E+2"), 2.25, "3/4"]
)
def test_bounded_float_fast_paths_agree(value):
    assert bounded_float(value, "x") == float(Fraction(str(value)))


@pytest.mark.parametrize("value", [10**9, Decimal("1E+9"), Decimal("NaN"), Decimal("Infinity")])
def test_bounded_float_fast_paths_refuse(value):
    with pytest.raises(TopologyError):
        bounded_float(value, "x", limit=1e6)


def test_nesting_depth_skips_scalars_but_counts_containers():
    assert nesting_depth([1, 2, {"a": [3, [4]]}], 99) == 4
    assert nesting_depth({"a": 1}, 99) == 1
    assert nesting_depth(5, 99) == 0
