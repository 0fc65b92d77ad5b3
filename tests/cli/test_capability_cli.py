"""``forestcoll info`` / ``solve`` print the three bounds for fabrics with reducing/multicasting
switches (and nothing new for fabrics without)."""

from __future__ import annotations

import json
from pathlib import Path

from solver.cli import main
from solver.io import templates as T
from solver.io import v1

ROOT = Path(__file__).resolve().parents[2]
H100_2X = ROOT / "sample_topologies" / "dgx_h100_rail_2x.json"
A100_2X = ROOT / "sample_topologies" / "dgx_a100_2x.json"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_info_prints_three_allreduce_figures(capsys):
    code, out, err = run(capsys, "info", H100_2X)
    assert code == 0 and err == ""
    assert "reduce/multicast: b0.nvsw, b1.nvsw; allreduce algbw bounds:" in out
    assert "forward-only optimum (switches forward, ForestColl's schedules): 266.67 GB/s" in out
    assert "any-schedule bound (whatever switches do): 400.00 GB/s" in out
    assert "with the marked capabilities: 400.00 GB/s (exact" in out


def test_info_json_carries_the_figures(capsys):
    code, out, _ = run(capsys, "info", H100_2X, "--json")
    doc = json.loads(out)
    assert doc["capable_switches"] == ["b0.nvsw", "b1.nvsw"]
    b = doc["allreduce_bounds_gbps"]
    assert abs(b["forward_only"] - 800 / 3) < 1e-9 and b["any_schedule"] == 400
    assert b["capability"] == 400 and b["capability_exact"] is True


def test_info_without_marked_switches_prints_no_bounds(capsys):
    code, out, _ = run(capsys, "info", A100_2X)
    assert code == 0 and "reduce/multicast" not in out
    code, out, _ = run(capsys, "info", A100_2X, "--json")
    assert json.loads(out)["allreduce_bounds_gbps"] is None


def test_solve_prints_the_bounds_of_its_collective(capsys, tmp_path):
    path = tmp_path / "h100.json"
    path.write_text(v1.dumps(T.make("dgx_h100_rail", n=1)), encoding="utf-8")
    code, out, _ = run(capsys, "solve", path, "--collective", "allreduce")
    assert code == 0
    assert "switches that reduce/multicast: b0.nvsw (reduce+multicast); allreduce bounds:" in out
    assert "any-schedule bound (whatever switches do): 450.00 GB/s" in out
    assert "with the marked capabilities: 450.00 GB/s (exact" in out
    code, out, _ = run(capsys, "solve", path)  # allgather: multicast changes nothing
    assert "allgather bounds:" in out
    assert out.count("514.29 GB/s") >= 3
