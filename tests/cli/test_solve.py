"""``forestcoll solve``: human report, --json document, -o files, exit codes on bad input."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from strategies import small_ring

import solver
from solver.cli import main
from solver.model.topology import Link, Node, Topology

ROOT = Path(__file__).resolve().parents[2]

TOP_KEYS = {
    "collective",
    "num_compute_nodes",
    "optimal_algbw",
    "optimal_algbw_exact",
    "algbw",
    "algbw_exact",
    "k",
    "max_trees_per_root",
    "num_trees",
    "bottleneck",
    "trees",
    "link_load",
    "timings",
    "warnings",
}


def switch_fabric() -> Topology:
    """4 GPUs in box b0 on a 300 GB/s switch, box b1 of 2 GPUs on 12.5 GB/s links; the boxes
    are joined by one 3.2 GB/s link, so box b0 is the bottleneck: 6/4 · 3.2 = 4.8 GB/s."""
    nodes = tuple(Node(f"b0.g{i}", "compute", role="gpu", group="b0") for i in range(4))
    nodes += tuple(Node(f"b1.g{i}", "compute", role="gpu", group="b1") for i in range(2))
    nodes += (Node("nv", "switch"), Node("ib", "switch"))
    links = tuple(Link(f"b0.g{i}", "nv", Fraction(300)) for i in range(4))
    links += tuple(Link(f"b1.g{i}", "ib", Fraction(25, 2)) for i in range(2))
    links += (Link("nv", "ib", Fraction(16, 5)), Link("b1.g0", "b1.g1", Fraction(100)))
    return Topology("two boxes", nodes, links)


@pytest.fixture
def fabric_file(tmp_path):
    path = tmp_path / "fabric.json"
    solver.save_topology(switch_fabric(), path)
    return path


def run_cli(capsys, *argv):
    code = main(["solve", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_human_report(capsys, fabric_file):
    code, out, err = run_cli(capsys, fabric_file)
    assert code == 0, err
    expected = solver.solve(switch_fabric())
    assert f"exact {expected.optimal_algbw_exact.numerator}" in out
    assert f"k = {expected.k} " in out
    assert "verified:   yes" in out
    # Bottleneck in words: box b0's four GPUs reach the rest through 3.2 GB/s only.
    assert "bottleneck: the 4 GPUs of group b0 (with 1 switch)" in out
    assert "can send out only 3.2 GB/s over 1 link" in out
    assert "N/|S∩Vc|·B(S) = 6/4 · 3.2 = 4.8 GB/s" in out
    assert "phases:     optimum" in out and "trees" in out


def test_json_document(capsys, fabric_file):
    code, out, err = run_cli(capsys, fabric_file, "--json", "--collective", "reduce-scatter")
    assert code == 0, err
    doc = json.loads(out)
    assert set(doc) == TOP_KEYS
    assert doc["collective"] == "reduce-scatter"
    assert doc["num_compute_nodes"] == 6
    assert doc["num_trees"] == len(doc["trees"]) > 0
    assert Fraction(doc["algbw_exact"]) == Fraction(doc["optimal_algbw_exact"]) == Fraction(24, 5)
    assert set(doc["bottleneck"]) == {
        "nodes",
        "compute_nodes_inside",
        "egress_bandwidth",
        "egress_bandwidth_exact",
        "links",
    }
    per_root: dict = {}
    for t in doc["trees"]:
        assert set(t) == {"root", "weight", "weight_exact", "multiplicity", "height", "edges"}
        per_root[t["root"]] = per_root.get(t["root"], 0) + Fraction(t["weight_exact"])
        for e in t["edges"]:
            assert e["path"][0] == e["src"] and e["path"][-1] == e["dst"]
    assert per_root == {c: 1 for c in switch_fabric().compute_ids}
    assert max(ll["load"] for ll in doc["link_load"]) == 1.0


def test_allreduce_json_has_phases(capsys, fabric_file):
    code, out, _ = run_cli(capsys, fabric_file, "--json", "--collective", "allreduce")
    assert code == 0
    doc = json.loads(out)
    assert {t["phase"] for t in doc["trees"]} == {"reduce-scatter", "allgather"}
    assert Fraction(doc["optimal_algbw_exact"]) == Fraction(12, 5)


def test_max_trees_per_root(capsys, tmp_path):
    path = tmp_path / "ring.json"
    solver.save_topology(small_ring(5), path)
    code, out, err = run_cli(capsys, path, "--json", "--max-trees-per-root", "1")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["k"] == 1 and doc["max_trees_per_root"] == 1
    assert Fraction(doc["algbw_exact"]) <= Fraction(doc["optimal_algbw_exact"])
    code, out, _ = run_cli(capsys, path, "--max-trees-per-root", "1")
    assert code == 0
    assert "limit:      at most 1 trees per root" in out


def test_output_json_is_the_json_document(capsys, fabric_file, tmp_path):
    target = tmp_path / "out" / "schedule.json"
    target.parent.mkdir()
    code, out, _ = run_cli(capsys, fabric_file, "-o", target)
    assert code == 0 and f"saved: {target}" in out
    written = json.loads(target.read_text())
    _, printed, _ = run_cli(capsys, fabric_file, "--json")
    printed = json.loads(printed)
    written.pop("timings"), printed.pop("timings")
    assert written == printed
    assert [p.name for p in target.parent.iterdir()] == ["schedule.json"]  # no temp file left


def test_output_h5(capsys, fabric_file, tmp_path):
    import h5py

    target = tmp_path / "results.h5"
    code, _, err = run_cli(capsys, fabric_file, "-o", target)
    assert code == 0, err
    with h5py.File(target, "r") as f:
        assert len(f.keys()) > 0


def test_no_verify(capsys, fabric_file):
    code, out, _ = run_cli(capsys, fabric_file, "--no-verify")
    assert code == 0 and "verified:   no" in out


def test_verification_failure_is_one_line(capsys, fabric_file, monkeypatch):
    real = solver.solve

    def broken(*args, **kwargs):
        s = real(*args, **kwargs)
        return dataclasses.replace(s, algbw_exact=s.algbw_exact * 2)

    monkeypatch.setattr(solver, "solve", broken)
    code, out, err = run_cli(capsys, fabric_file)
    assert code == 2 and out == ""
    assert err.startswith("error: the schedule failed verification: allgather: algbw_exact")
    assert err.count("\n") == 1


TWO_NODES = (
    '{"format": "forestcoll-topology", "version": 1, "nodes": ['
    '{"id": "a", "kind": "compute"}, {"id": "b", "kind": "compute"}], "links": ['
)


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        ("{not json", "invalid JSON"),
        (
            '{"format": "forestcoll-topology", "version": 1, "nodes": [], "links": []}',
            "at least two compute nodes",
        ),
        (
            TWO_NODES + '{"source": "a", "target": "b", "bandwidth": 1, "directed": true}]}',
            "cannot reach",
        ),
        (TWO_NODES + '{"source": "a", "target": "b", "bandwidth": -3}]}', "bandwidth must be > 0"),
    ],
)
def test_bad_fabric_exit_2(capsys, tmp_path, content, message):
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    code, out, err = run_cli(capsys, path)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--max-trees-per-root", "0"], "--max-trees-per-root must be >= 1"),
        (["-o", "schedule.txt"], "unknown output type"),
    ],
)
def test_bad_options_exit_2(capsys, fabric_file, argv, message):
    code, _out, err = run_cli(capsys, fabric_file, *argv)
    assert code == 2 and message in err and err.count("\n") == 1


def test_argparse_errors_exit_2(capsys, fabric_file):
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(fabric_file), "--collective", "broadcast"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_help_has_an_example(capsys):
    with pytest.raises(SystemExit):
        main(["solve", "--help"])
    out = capsys.readouterr().out
    assert "--max-trees-per-root" in out and "--no-verify" in out
    assert "example:\n  forestcoll solve " in out


def test_subprocess_exit_codes(tmp_path, fabric_file):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    for argv, code in (([str(fabric_file), "--json"], 0), ([str(bad)], 2)):
        proc = subprocess.run(
            [sys.executable, "-m", "solver.cli", "solve", *argv],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == code, proc.stderr
        assert "Traceback" not in proc.stderr
        if code == 0:
            assert json.loads(proc.stdout)["collective"] == "allgather"
        else:
            assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


def test_unbalanced_switch_warns_or_names_it(capsys, tmp_path):
    topo = switch_fabric()
    topo = dataclasses.replace(
        topo, links=topo.links + (Link("b0.g0", "nv", Fraction(7), directed=True),)
    )
    path = tmp_path / "unbalanced.json"
    solver.save_topology(topo, path)
    code, out, err = run_cli(capsys, path)
    if code == 0:
        assert "warning:" in out and "'nv'" in out and "verified:   yes" in out
    else:
        assert code == 2 and "nv" in err and err.count("\n") == 1


def test_progress_bar_only_on_a_terminal(capsys, fabric_file, monkeypatch):
    from solver.cli._common import ProgressBar

    real = solver.solve
    seen = []

    def spy(*args, **kwargs):
        seen.append(kwargs.get("progress"))
        return real(*args, **kwargs)

    monkeypatch.setattr(solver, "solve", spy)
    code, _out, err = run_cli(capsys, fabric_file)
    assert code == 0
    assert isinstance(seen[0], ProgressBar)
    assert err == ""  # stderr is not a terminal here: no bar drawn


def test_two_solves_into_one_results_file_keep_both_schedules(tmp_path):
    """Two ``solve -o same.h5`` at once: each read-modify-write holds the folder's lock
    (solver.io.files.write_lock), so the second reads the first's schedule instead of writing
    over it; before, one schedule was lost while both printed "saved" (issue 21 item 4)."""
    out = tmp_path / "same.h5"
    ring8 = ROOT / "sample_topologies" / "ring_8.json"
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "solver.cli",
                "solve",
                str(ring8),
                "--collective",
                c,
                "-o",
                str(out),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for c in ("allgather", "reduce-scatter", "allreduce")
    ]
    for run in runs:
        stdout, stderr = run.communicate(timeout=300)
        assert run.returncode == 0, stderr
        assert "saved: " in stdout
    from solver.io.hdf5.results import read_schedules

    assert set(read_schedules(out)) == {"allgather", "reduce-scatter", "allreduce"}
