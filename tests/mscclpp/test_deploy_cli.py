"""CLI: export --format mscclpp, export --bands, check-plan / check-xml on folders, folder warnings."""

from __future__ import annotations

import json
from pathlib import Path

from solver.cli import main

ROOT = Path(__file__).resolve().parents[2]
A100 = ROOT / "sample_topologies" / "dgx_a100_2x.json"
H100 = ROOT / "sample_topologies" / "dgx_h100_rail_2x.json"
MI250 = ROOT / "sample_topologies" / "mi250_2x.json"


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_export_mscclpp_writes_a_checked_plan(tmp_path, capsys):
    out = tmp_path / "plans" / "ar.json"
    out.parent.mkdir()
    code, text, err = run(
        [
            "export",
            A100,
            "--collective",
            "allreduce",
            "--max-trees-per-root",
            "1",
            "--format",
            "mscclpp",
            "-o",
            out,
        ],
        capsys,
    )
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert doc["collective"] == "allreduce" and len(doc["gpus"]) == 16
    assert doc["forestcoll"]["ranks"][0] == "b0.gpu0"
    assert (doc["min_message_size"], doc["max_message_size"]) == (0, 2**32 - 1)  # uint32 offsets
    assert "result checked" in text and "mscclpp.ExecutionPlan(" in text
    assert "message sizes: multiples of 256 bytes" in text  # 16 B alignment x 16 chunks
    code, text, err = run(["check-plan", out.parent], capsys)
    assert code == 0 and "ar.json: MSCCL++ plan" in text


def test_export_mscclpp_refuses_ll(tmp_path, capsys):
    code, text, err = run(
        ["export", A100, "--format", "mscclpp", "--proto", "LL", "-o", tmp_path / "p.json"], capsys
    )
    assert code == 2 and "Simple protocol" in err and not (tmp_path / "p.json").exists()


def test_check_plan_refuses_a_broken_plan_with_one_line(tmp_path, capsys):
    doc = json.loads((ROOT / "tests/data/real/mscclpp/allreduce.json").read_text())
    ops = doc["gpus"][0]["threadblocks"][0]["ops"]
    del ops[-1]  # rank 0's last wait: rank 1's final signal is never taken
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    code, text, err = run(["check-plan", bad], capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ")


def test_xml_export_warns_about_other_files_in_its_folder(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("not an algorithm")
    code, text, err = run(
        ["export", A100, "--max-trees-per-root", "1", "-o", tmp_path / "ag.xml"], capsys
    )
    assert code == 0
    assert "warning:" in err and "notes.txt" in err and "msccl_lifecycle.cc:177-185" in err
    assert f"MSCCL_ALGO_DIR={tmp_path.resolve()}" in text
    code, text, err = run(["check-xml", tmp_path], capsys)  # the runtime would fail on notes.txt
    assert code == 2 and "notes.txt" in err
    (tmp_path / "notes.txt").unlink()
    code, text, err = run(["check-xml", tmp_path], capsys)
    assert code == 0 and "ag.xml: ok" in text


def test_bands_refuse_a_folder_with_files(tmp_path, capsys):
    (tmp_path / "old.xml").write_text("<algo/>")
    code, text, err = run(
        ["export", H100, "--collective", "allreduce", "--bands", "-o", tmp_path], capsys
    )
    assert code == 2 and "already holds 1 file" in err


def _table(text):
    rows = [ln for ln in text.splitlines() if ".." in ln and "GB/s" in ln]
    return [(ln.split()[0], ln.split()[1]) for ln in rows]


def test_bands_h100_rail_allreduce_xml(tmp_path, capsys):
    out = tmp_path / "algos"
    code, text, err = run(
        ["export", H100, "--collective", "allreduce", "--bands", "-o", out], capsys
    )
    assert code == 0, err
    table = _table(text)
    assert table  # one row per size band; a band the library wins has no file
    files = sorted(out.iterdir())
    wins = [b for b in table if b[1] != "library"]
    assert wins and len(files) == len(wins)
    import xml.etree.ElementTree as ET

    ranges = sorted(
        (int(ET.parse(f).getroot().get("minBytes")), int(ET.parse(f).getroot().get("maxBytes")))
        for f in files
    )
    # the first band starts at the file's size step (nchunksperloop): smaller sizes are the library's
    # every band but the top one is bounded (the top one is open-ended when ForestColl wins there)
    assert 0 < ranges[0][0] <= 4096 and all(hi > 0 for _, hi in ranges[:-1])
    code, text, err = run(["check-xml", out], capsys)
    assert code == 0 and text.count(": ok:") == len(files)


def test_bands_mi250_allgather_mscclpp(tmp_path, capsys):
    out = tmp_path / "plans"
    code, text, err = run(
        ["export", MI250, "--collective", "allgather", "--bands", "--format", "mscclpp", "-o", out],
        capsys,
    )
    assert code == 0, err
    table = _table(text)
    wins = [b for b in table if b[1] != "library"]
    files = sorted(out.glob("*.json"))
    assert len(files) == len(wins) >= 1
    docs = [json.loads(f.read_text()) for f in files]
    lo = sorted((d["min_message_size"], d["max_message_size"]) for d in docs)
    assert 0 < lo[0][0] <= 4096 and all(a[1] < b[0] for a, b in zip(lo, lo[1:]))  # disjoint bands
    for d, (_low, _) in zip(docs, lo):
        from solver.mscclpp import size_granularity

        assert d["min_message_size"] % size_granularity(d) == 0 or d["min_message_size"] > 1024
    code, text, err = run(["check-plan", out], capsys)
    assert code == 0 and text.count("result checked") == len(files)


def test_export_mscclpp_from_a_results_file(tmp_path, capsys):
    h5 = tmp_path / "r.h5"
    code, _, err = run(
        ["solve", A100, "--collective", "reduce-scatter", "--max-trees-per-root", "1", "-o", h5],
        capsys,
    )
    assert code == 0, err
    out = tmp_path / "p" / "rs.json"
    out.parent.mkdir()
    code, text, err = run(
        [
            "export",
            h5,
            "--collective",
            "reduce-scatter",
            "--max-trees-per-root",
            "1",
            "--format",
            "mscclpp",
            "-o",
            out,
        ],
        capsys,
    )
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert doc["collective"] == "reducescatter" and doc["gpus"][0]["output_chunks"] == 1


def test_bands_need_the_fabric_file(tmp_path, capsys):
    h5 = tmp_path / "r.h5"
    assert run(["solve", A100, "-o", h5], capsys)[0] == 0
    code, text, err = run(["export", h5, "--bands", "-o", tmp_path / "algos"], capsys)
    assert code == 2 and "needs the fabric file" in err and not (tmp_path / "algos").exists()


def test_max_threadblocks_option(tmp_path, capsys):
    out = tmp_path / "ag.json"
    code, text, err = run(
        [
            "export",
            A100,
            "--max-trees-per-root",
            "1",
            "--format",
            "mscclpp",
            "--max-threadblocks",
            "8",
            "-o",
            out,
        ],
        capsys,
    )
    assert code == 0, err
    assert len(json.loads(out.read_text())["gpus"][0]["threadblocks"]) <= 8
    code, text, err = run(["check-plan", out, "--max-threadblocks", "4"], capsys)
    assert code == 2 and "this check allows 4" in err
    code, text, err = run(
        [
            "export",
            A100,
            "--format",
            "mscclpp",
            "--max-threadblocks",
            "0",
            "-o",
            tmp_path / "x.json",
        ],
        capsys,
    )
    assert code == 2 and "--max-threadblocks 0" in err


def test_rank_order_and_stdout(tmp_path, capsys):
    from solver.io.formats import load

    ids = list(load(A100).compute_ids)
    order = tmp_path / "order.txt"
    order.write_text("\n".join(reversed(ids)) + "\n")
    code, text, err = run(
        [
            "export",
            A100,
            "--max-trees-per-root",
            "1",
            "--format",
            "mscclpp",
            "--rank-order",
            order,
            "-o",
            "-",
        ],
        capsys,
    )
    assert code == 0, err
    doc = json.loads(text)
    assert doc["forestcoll"]["ranks"] == list(reversed(ids))
    from solver.mscclpp import check_plan

    check_plan(doc)
