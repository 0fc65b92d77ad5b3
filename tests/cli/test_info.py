"""``forestcoll info`` and ``forestcoll convert``: output, JSON keys, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from solver.cli import main
from solver.io.formats import load

ROOT = Path(__file__).resolve().parents[2]
DGX_XML = ROOT / "tests" / "data" / "dgx_a100_nccl_topo.xml"
SAMPLE = ROOT / "sample_topologies" / "dgx_a100_2x.json"


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in err
    return lines[0]


def test_info_text(capsys):
    code, out, err = run(["info", SAMPLE], capsys)
    assert code == 0 and err == ""
    assert "name:             2x DGX A100" in out
    assert "compute nodes:    16" in out
    assert "switches:         20" in out
    assert "links:            48 physical, 96 directed" in out
    assert "compute ingress:  325 GB/s" in out
    assert "every switch balanced" in out
    assert "every compute node reaches every other" in out


def test_info_json(capsys):
    code, out, _ = run(["info", SAMPLE, "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["name"] == "2x DGX A100"
    assert data["compute_nodes"] == 16
    assert data["switches"] == 20
    assert data["links"] == 96
    assert data["balanced_switches"] is True
    assert data["unbalanced_switches"] == []
    assert data["ingress_gbps"] == {"min": 325.0, "max": 325.0}
    assert data["connected"] is True


def write_v1(tmp_path, nodes, links, name="t.json"):
    path = tmp_path / name
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
    return path


def test_info_lists_unbalanced_switches(tmp_path, capsys):
    nodes = [
        {"id": "a", "kind": "compute"},
        {"id": "b", "kind": "compute"},
        {"id": "w", "kind": "switch"},
    ]
    links = [
        {"source": "a", "target": "w", "bandwidth": 10, "directed": True},
        {"source": "w", "target": "b", "bandwidth": 4, "directed": True},
        {"source": "b", "target": "a", "bandwidth": 2.5, "directed": True},
    ]
    path = write_v1(tmp_path, nodes, links)
    code, out, _ = run(["info", path], capsys)
    assert code == 0
    assert "1 unbalanced switch(es)" in out and "w: in 10 GB/s, out 4 GB/s" in out
    assert "compute ingress:  2.5 .. 4 GB/s" in out
    code, out, _ = run(["info", path, "--json"], capsys)
    data = json.loads(out)
    assert data["balanced_switches"] is False
    assert data["unbalanced_switches"] == [{"id": "w", "in_gbps": 10.0, "out_gbps": 4.0}]


def test_info_reports_then_fails_on_disconnected_fabric(tmp_path, capsys):
    nodes = [{"id": i, "kind": "compute"} for i in "abc"]
    links = [{"source": "a", "target": "b", "bandwidth": 1}]
    code, out, err = run(["info", write_v1(tmp_path, nodes, links)], capsys)
    assert code == 2
    assert "connectivity:     NO: compute node 'c' cannot be reached" in out
    assert "cannot be reached from compute node 'a'" in one_line_error(err)


@pytest.mark.parametrize(
    "content, pattern",
    [
        ("{ nope", "invalid JSON"),
        (
            (
                '{"format": "forestcoll-topology", "version": 1, "nodes": [{"id": "a", "kind": "compute"}, '
                '{"id": "a", "kind": "compute"}], "links": []}'
            ),
            "duplicate node id 'a'",
        ),
        (
            (
                '{"format": "forestcoll-topology", "version": 1, "nodes": [{"id": "a", "kind": "compute"}, '
                '{"id": "b", "kind": "compute"}], "links": [{"source": "a", "target": "b", "bandwidth": NaN}]}'
            ),
            "bandwidth must be finite",
        ),
    ],
)
def test_info_bad_files_exit_2_with_one_line(tmp_path, capsys, content, pattern):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(["info", path], capsys)
    assert code == 2 and out == ""
    line = one_line_error(err)
    assert pattern in line and str(path) in line


def test_info_on_nccl_xml_with_boxes(capsys):
    code, out, _ = run(["info", DGX_XML, "--boxes", "2", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["compute_nodes"] == 16 and data["roles"]["ib"] == 1


def test_boxes_only_for_xml(capsys):
    code, _, err = run(["info", SAMPLE, "--boxes", "2"], capsys)
    assert code == 2 and "--boxes applies to NCCL/RCCL .xml dumps only" in one_line_error(err)


def test_convert_xml_to_every_format(tmp_path, capsys):
    for name in ("out.json", "out.nodelink.json", "out.graphml"):
        code, out, err = run(
            ["convert", DGX_XML, tmp_path / name, "--boxes", "2", "--fabric", "rail"], capsys
        )
        assert code == 0, err
        assert out.startswith(f"wrote {tmp_path / name}") and "16 compute nodes" in out
    a, b, c = (load(tmp_path / n) for n in ("out.json", "out.nodelink.json", "out.graphml"))
    assert a.directed_bandwidths() == b.directed_bandwidths() == c.directed_bandwidths()
    assert a.directed_bandwidths()[("b1.nic3", "rail3")] == 25


def test_convert_keeps_exact_bandwidths(tmp_path, capsys):
    nodes = [{"id": "a", "kind": "compute"}, {"id": "b", "kind": "compute"}]
    src = write_v1(tmp_path, nodes, [{"source": "a", "target": "b", "bandwidth": "1/3"}])
    code, _, _ = run(["convert", src, tmp_path / "x.graphml"], capsys)
    assert code == 0
    code, _, _ = run(["convert", tmp_path / "x.graphml", tmp_path / "y.json"], capsys)
    assert load(tmp_path / "y.json").links[0].bandwidth == Fraction(1, 3)


def test_convert_errors(tmp_path, capsys):
    code, _, err = run(["convert", SAMPLE, tmp_path / "out.xml"], capsys)
    assert code == 2 and "cannot write NCCL XML" in one_line_error(err)
    code, _, err = run(["convert", SAMPLE, tmp_path / "out.yaml"], capsys)
    assert code == 2 and "unknown file type" in one_line_error(err)
    code, _, err = run(["convert", tmp_path / "missing.json", tmp_path / "o.json"], capsys)
    assert code == 2 and "no such file" in one_line_error(err)
    code, _, err = run(["convert", SAMPLE, tmp_path / "new" / "dir" / "o.json"], capsys)
    assert code == 0 and (tmp_path / "new" / "dir" / "o.json").exists()  # folders are created
    (tmp_path / "plain").write_text("x")
    code, _, err = run(["convert", SAMPLE, tmp_path / "plain" / "o.json"], capsys)
    assert code == 2 and "cannot write" in one_line_error(err)


def test_help_ends_with_an_example(capsys):
    for command in ("info", "convert"):
        with pytest.raises(SystemExit) as info:
            main([command, "--help"])
        assert info.value.code == 0
        out = capsys.readouterr().out
        assert "example:" in out and f"forestcoll {command} " in out


def test_real_process_exit_code_and_stderr(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[")
    proc = subprocess.run(
        [sys.executable, "-m", "solver.cli", "info", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


def test_convert_writes_templates(tmp_path, capsys):
    out = tmp_path / "h100.json"
    code, text, err = run(
        ["convert", "--template", "dgx_h100_rail", "--param", "n=3", "--param", "nic_bw=12.5", out],
        capsys,
    )
    assert code == 0, err
    assert "24 compute nodes" in text
    topo = load(out)
    assert topo.directed_bandwidths()[("b2.nic7", "rail7")] == Fraction(25, 2)
    code, text, _ = run(["convert", "--list-templates"], capsys)
    assert code == 0 and "fat_tree:" in text and "oversubscription=1" in text


@pytest.mark.parametrize(
    "argv, pattern",
    [
        (["--template", "ring", "--param", "n=1"], "between 2 and 256"),
        (["--template", "ring", "--param", "n"], "KEY=VALUE"),
        (["--template", "ring", "--param", "n=four"], "is not a number"),
        (["--template", "torus"], "unknown template 'torus'"),
        (["--template", "ring", "--boxes", "2"], "use --param n=N"),
    ],
)
def test_convert_template_errors(tmp_path, capsys, argv, pattern):
    code, _, err = run(["convert", *argv, tmp_path / "o.json"], capsys)
    assert code == 2 and pattern in one_line_error(err)
    assert not (tmp_path / "o.json").exists()


def test_convert_path_count_is_checked(tmp_path, capsys):
    code, _, err = run(["convert", SAMPLE], capsys)
    assert code == 2 and "convert needs IN OUT, got 1 path(s)" in one_line_error(err)
    code, _, err = run(["convert", "--param", "n=2", SAMPLE, tmp_path / "o.json"], capsys)
    assert code == 2 and "--param applies to --template only" in one_line_error(err)


def test_info_names_the_library_the_hardware_runs(capsys):
    from pathlib import Path

    dump = Path(__file__).resolve().parents[1] / "data" / "real" / "topo" / "rccl_topo_8p_940.xml"
    assert main(["info", str(dump)]) == 0
    assert "library:          rccl cdna3 (AMD GPUs (gcn gfx942))" in capsys.readouterr().out
    assert main(["info", str(dump), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["library"] == "rccl cdna3" and "gfx942" in doc["library_reason"]
