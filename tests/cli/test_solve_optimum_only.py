"""``forestcoll solve --optimum-only`` and the fall-back to it over the schedule-size limit."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from solver.algorithm import cost
from solver.cli import main
from solver.io import templates as T
from solver.io import v1

ROOT = Path(__file__).resolve().parents[2]
A100_2X = ROOT / "sample_topologies" / "dgx_a100_2x.json"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_optimum_only_text(capsys):
    code, out, err = run(capsys, "solve", A100_2X, "--optimum-only")
    assert code == 0 and err == ""
    assert "optimum:    346.667 GB/s (exact 1040/3)" in out
    assert "bottleneck: the 15 GPUs other than" in out and "16/15 · 325 = 346.667 GB/s" in out
    assert "sinks:      " in out and "no trees (--optimum-only)" in out
    assert "schedule:" not in out


def test_optimum_only_json_is_one_compact_line(capsys, tmp_path):
    saved = tmp_path / "opt.json"
    code, out, _ = run(
        capsys, "solve", A100_2X, "--optimum-only", "--json", "-c", "allreduce", "-o", saved
    )
    assert code == 0 and out.count("\n") == 1 and ": " not in out
    doc = json.loads(out)
    assert doc["format"] == "forestcoll-optimum" and doc["collective"] == "allreduce"
    assert Fraction(doc["algbw_exact"]) == Fraction(520, 3)
    assert [p["collective"] for p in doc["phases"]] == ["reduce-scatter", "allgather"]
    cut = doc["phases"][1]["bottleneck"]
    assert cut["compute_nodes_inside"] == 15 and Fraction(cut["bandwidth_exact"]) == 325
    assert sum(b for _, _, b in cut["links"]) == 325
    assert json.loads(saved.read_text()) == doc


@pytest.mark.parametrize(
    "extra, message",
    [
        (["-o", "x.h5"], "x.h5: --optimum-only saves a .json document only"),
        (["--compressed"], "--optimum-only computes no trees"),
        (["--max-trees-per-root", "2"], "--optimum-only computes no trees"),
    ],
)
def test_optimum_only_refuses_what_needs_trees(capsys, tmp_path, extra, message):
    code, out, err = run(capsys, "solve", A100_2X, "--optimum-only", *extra)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err


def test_over_the_size_limit_solve_falls_back_to_the_optimum(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(cost, "MAX_TREE_EDGES", 100)  # 16 GPUs: 240 tree edges
    code, out, err = run(capsys, "solve", A100_2X)
    assert code == 0
    assert err.startswith("note: the full schedule of 16 compute nodes has 240 tree edges")
    assert "the optimum and bottleneck cut only (no trees)" in err
    assert "optimum:    346.667 GB/s (exact 1040/3)" in out and "schedule:" not in out
    code, out, err = run(capsys, "solve", A100_2X, "--json")
    assert code == 0 and json.loads(out)["note"].startswith("the full schedule of 16")
    code, out, err = run(capsys, "solve", A100_2X, "-o", tmp_path / "s.h5")
    assert code == 2 and "only a .json document can be saved" in err


def test_over_the_size_limit_box_fabrics_still_get_a_plan(capsys, monkeypatch, tmp_path):
    """Where a compressed plan exists it is what solve gives (not the fall-back)."""
    monkeypatch.setattr(cost, "MAX_TREE_EDGES", 100)
    path = tmp_path / "rail.json"
    path.write_text(v1.dumps(T.make("dgx_h100_rail", n=4)), encoding="utf-8")
    code, out, err = run(capsys, "solve", path, "--compressed")
    assert code == 0 and "compressed:" in out and "note:" not in err


def test_a_phase_over_its_limit_falls_back_to_the_optimum(capsys, monkeypatch):
    """A 4096-GPU SuperPOD's switch removal would store 5.3 GiB of flows: solve says so and
    still gives the optimum and the cut (it used to end with the error alone after a minute)."""
    monkeypatch.setattr(cost, "MAX_FLOW_ROWS_BYTES", 1000)
    code, out, err = run(capsys, "solve", A100_2X)
    assert code == 0
    assert err.startswith("note: switch removal would store 16 flows of ")
    assert err.rstrip().endswith("the optimum and bottleneck cut only (no trees)")
    assert "optimum:    346.667 GB/s (exact 1040/3)" in out and "schedule:" not in out
    code, out, err = run(capsys, "solve", A100_2X, "--json")
    assert code == 0 and json.loads(out)["note"].startswith("switch removal would store")
