"""CLI: forestcoll export / check-xml / show (via main([...]), exit codes and one-line errors)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from solver import save_topology, solve
from solver.cli import main
from solver.io.hdf5.results import read_schedules, write_schedule
from solver.io.templates import dgx_a100, ring

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture()
def fabric(tmp_path):
    path = tmp_path / "dgx2.json"
    save_topology(dgx_a100(2), path)
    return path


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_export_msccl_from_topology_then_check(tmp_path, fabric, capsys):
    out = tmp_path / "ar.xml"
    code, text, err = run(
        ["export", fabric, "--collective", "allreduce", "--max-trees-per-root", "1", "-o", out],
        capsys,
    )
    assert code == 0, err
    assert "ok: allreduce on 16 ranks" in text
    assert "NCCL_MSCCL_ENABLE=1 MSCCL_ALGO_DIR=" in text
    assert "0=b0.gpu0" in text
    root = ET.parse(out).getroot()
    assert root.get("coll") == "allreduce" and root.get("ngpus") == "16"
    code, text, err = run(["check-xml", out, "--runtime", "rccl"], capsys)
    assert code == 0 and "result verified" in text


def test_export_runtime_hints_and_names(tmp_path, fabric, capsys):
    out = tmp_path / "rs.xml"
    code, text, _ = run(
        [
            "export",
            fabric,
            "--collective",
            "reduce-scatter",
            "--max-trees-per-root",
            "1",
            "--runtime",
            "msccl-legacy",
            "-o",
            out,
        ],
        capsys,
    )
    assert code == 0
    assert "MSCCL_XML_FILES=" in text and "NCCL_ALGO=MSCCL,RING,TREE" in text
    assert ET.parse(out).getroot().get("coll") == "reduce_scatter"
    code, text, _ = run(
        [
            "export",
            fabric,
            "--max-trees-per-root",
            "1",
            "--runtime",
            "rccl",
            "-o",
            tmp_path / "ag.xml",
        ],
        capsys,
    )
    assert code == 0 and "RCCL_MSCCL_ENABLE=1" in text


def test_export_json_matches_to_dict(tmp_path, capsys):
    topo_path = tmp_path / "ring.json"
    save_topology(ring(4), topo_path)
    out = tmp_path / "s.json"
    code, text, _ = run(["export", topo_path, "-o", out], capsys)
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["collective"] == "allgather" and doc["num_compute_nodes"] == 4
    code, text, _ = run(["export", topo_path, "--format", "json", "-o", "-"], capsys)
    again = json.loads(text)
    again.pop("timings"), doc.pop("timings")
    assert again == doc


def test_export_from_results_file(tmp_path, capsys):
    h5 = tmp_path / "r.h5"
    s = solve(ring(4), "allreduce", max_trees_per_root=1)  # a stored schedule is verified: real
    write_schedule(h5, s)
    code, _text, err = run(
        [
            "export",
            h5,
            "--collective",
            "allreduce",
            "--max-trees-per-root",
            "1",
            "-o",
            tmp_path / "a.xml",
        ],
        capsys,
    )
    assert code == 0, err
    code, _, err = run(["export", h5, "-o", tmp_path / "b.xml"], capsys)
    assert code == 2
    assert err.startswith("error: ") and "no allgather schedule" in err and "allreduce_k1" in err
    assert err.count("\n") == 1
    code, _, err = run(["export", h5, "--schedule", "nope", "-o", tmp_path / "b.xml"], capsys)
    assert code == 2 and "no schedule 'nope'" in err
    code, _, _ = run(
        ["export", h5, "--schedule", "allreduce_k1", "-o", tmp_path / "c.json"], capsys
    )
    assert code == 0
    assert json.loads((tmp_path / "c.json").read_text())["collective"] == "allreduce"
    assert set(read_schedules(h5)) == {"allreduce_k1"}


def test_export_rank_order_file(tmp_path, capsys):
    topo_path = tmp_path / "ring.json"
    save_topology(ring(4), topo_path)
    ids = ring(4).compute_ids
    order = tmp_path / "order.txt"
    order.write_text("# rank order\n" + "\n".join(reversed(ids)) + "\n")
    code, text, err = run(
        ["export", topo_path, "--rank-order", order, "-o", tmp_path / "a.xml"], capsys
    )
    assert code == 0, err
    assert f"0={ids[-1]}" in text
    order.write_text("\n".join(ids[:3]))
    code, _, err = run(
        ["export", topo_path, "--rank-order", order, "-o", tmp_path / "a.xml"], capsys
    )
    assert code == 2 and "misses compute node" in err


def test_export_errors_are_one_line(tmp_path, fabric, capsys):
    (tmp_path / "plain").write_text("x")
    cases = [
        (["export", fabric, "-o", tmp_path / "x.txt"], "cannot tell the format"),
        (["export", tmp_path / "missing.json", "-o", tmp_path / "x.xml"], "no such file"),
        (["export", fabric, "--max-trees-per-root", "0", "-o", tmp_path / "x.xml"], "must be >= 1"),
        (
            [
                "export",
                fabric,
                "--instances",
                "0",
                "--max-trees-per-root",
                "1",
                "-o",
                tmp_path / "x.xml",
            ],
            "--instances must be >= 1",
        ),
        (
            ["export", fabric, "--max-trees-per-root", "1", "-o", tmp_path / "plain" / "x.xml"],
            "cannot write",
        ),
        (
            [
                "export",
                fabric,
                "--max-trees-per-root",
                "1",
                "--max-bytes",
                str(2**64),
                "-o",
                tmp_path / "x.xml",
            ],
            "--max-bytes 18446744073709551616 must be between 0 and 9223372036854775807: the "
            "runtimes read it with strtoll into an int64_t",
        ),
        (
            [
                "export",
                fabric,
                "--max-trees-per-root",
                "1",
                "--min-bytes",
                "-1",
                "-o",
                tmp_path / "x.xml",
            ],
            "--min-bytes -1 must be between 0",
        ),
    ]
    for argv, message in cases:
        code, _, err = run(argv, capsys)
        assert code == 2, argv
        assert err.startswith("error: ") and message in err, err
        assert err.count("\n") == 1


def test_check_xml_broken_file_exit_2(capsys):
    code, _, err = run(["check-xml", DATA / "msccl_deadlock.xml"], capsys)
    assert code == 2 and "deadlock" in err and err.count("\n") == 1
    code, text, _ = run(["check-xml", DATA / "msccl_ok_ring_allgather.xml"], capsys)
    assert code == 0 and "ok: allgather on 3 ranks" in text
    code, _, err = run(
        ["check-xml", DATA / "msccl_ok_ring_allgather.xml", "--fifo-capacity", "0"], capsys
    )
    assert code == 2 and "fifo-capacity" in err


def test_show_summarises_and_lists_trees(tmp_path, capsys):
    h5 = tmp_path / "r.h5"
    from solver.simulate.estimate import model_tables

    write_schedule(h5, solve(ring(4), max_trees_per_root=1), tables=model_tables)
    code, text, _ = run(["show", h5], capsys)
    assert code == 0
    assert "forestcoll-results 1.2" in text and "allgather_k1: allgather, k=1" in text
    assert "allgather_k1.bound: model / forestcoll, 23 sizes 1K..4G" in text
    code, text, _ = run(["show", h5, "--trees", "allgather_k1"], capsys)
    assert code == 0 and text.count("root ") == 4
    code, _, err = run(["show", h5, "--trees", "x"], capsys)
    assert code == 2 and "no schedule 'x'" in err
    bad = tmp_path / "bad.h5"
    bad.write_text("nope")
    code, _, err = run(["show", bad], capsys)
    assert code == 2 and "not an HDF5 file" in err


@pytest.mark.parametrize("command", ["export", "check-xml", "show"])
def test_help_has_example(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "example:" in out and "forestcoll " + command in out
