"""Issue 13's examples, one per class, through the real command line (the fuzzing suite in
tests/fuzz looks for the rest of each class)."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from solver.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
RING = ROOT / "sample_topologies" / "ring_8.json"


def _run(argv, capsys) -> tuple[int, str]:
    start = time.process_time()
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert time.process_time() - start < 10, argv
    return code, err


def _one_error(code: int, err: str, *needles: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]


def _v1(tmp_path: Path, raw_link: str = "", raw_node: str = "") -> Path:
    path = tmp_path / "f.json"
    path.write_text(
        '{"format": "forestcoll-topology", "version": 1, "nodes": ['
        f'{{"id": "a", "kind": "compute"{raw_node}}}, {{"id": "b", "kind": "compute"}}], '
        f'"links": [{{"source": "a", "target": "b", "bandwidth": 10{raw_link}}}]}}'
    )
    return path


@pytest.mark.parametrize(
    "raw_link, raw_node, needle",
    [
        (', "bandwidth": 1e999999999', "", "out of range"),
        (', "latency": 1e999999999', "", "out of range"),
        (', "bandwidth": 1e400', "", "out of range"),
        (', "bandwidth": "1/' + "3" * 4000 + '"', "", "characters"),
        ("", ', "x": 1e309', "out of range"),
        ("", ', "y": ' + "9" * 4000, "characters long"),
        (', "bandwidth": 2e9', "", "at most 1e+09 GB/s"),
    ],
)
@pytest.mark.parametrize("command", ["info", "solve", "simulate"])
def test_short_hostile_numbers_are_refused_fast(
    command, raw_link, raw_node, needle, tmp_path, capsys
):
    code, err = _run([command, _v1(tmp_path, raw_link, raw_node)], capsys)
    _one_error(code, err, needle)


def test_graphml_and_nccl_xml_numbers(tmp_path, capsys):
    g = tmp_path / "f.graphml"
    g.write_text(
        '<graphml><key id="k" for="node" attr.name="kind"/><key id="b" for="edge" '
        'attr.name="bandwidth"/><key id="x" for="node" attr.name="x"/><graph>'
        '<node id="a"><data key="k">compute</data><data key="x">1e999999999</data></node>'
        '<node id="c"><data key="k">compute</data></node><edge source="a" target="c">'
        '<data key="b">5</data></edge></graph></graphml>'
    )
    _one_error(*_run(["info", g], capsys), "out of range")
    x = tmp_path / "f.xml"
    x.write_text(
        "<system><cpu numaid='0'><pci busid='0000:01:00.0' class='0x030200' link_speed='16 GT/s'"
        f" link_width='{'9' * 4000}'><gpu dev='0' sm='80' rank='0'/></pci></cpu></system>"
    )
    _one_error(*_run(["info", x], capsys), "link_width")
    x.write_text("<system><cpu>" + "<pci>" * 2000 + "</pci>" * 2000 + "</cpu></system>")
    _one_error(*_run(["info", x], capsys), "nested more than 64")


def test_deep_json_everywhere(tmp_path, capsys):
    deep = "[" * 1000 + "]" * 1000
    f = tmp_path / "f.json"
    f.write_text('{"format": "forestcoll-topology", "version": 1, "extra": ' + deep + "}")
    _one_error(*_run(["info", f], capsys), "nested more than 64")
    log = tmp_path / "log.json"
    log.write_text('{"results": ' + deep + "}")
    _one_error(
        *_run(["measure", "import", log, "-t", RING, "-o", tmp_path / "r.h5"], capsys),
        "nested more than 64",
    )


@pytest.mark.parametrize(
    "record, needle",
    [
        ({"size": -1024}, "size must be at least 0"),
        ({"size": 1e23}, "size"),
        ({"time": -1}, "time must be >= 0"),
        ({"alg_bw": 1e999}, "alg_bw"),
    ],
)
def test_measured_json_refuses_negative_and_huge_values(record, needle, tmp_path, capsys):
    doc = json.loads((DATA / "nccl_tests_allgather_2xmi250.json").read_text())
    first = doc["results"][0]
    if "size" in record:
        first["size"] = "@V@"
        value = record["size"]
    else:
        key = next(iter(record))
        first["out_of_place"][key] = "@V@"
        value = record[key]
    log = tmp_path / "log.json"
    log.write_text(json.dumps(doc).replace('"@V@"', repr(value) if value != 1e999 else "1e999"))
    fabric = ROOT / "sample_topologies" / "mi250_2x.json"
    code, err = _run(["measure", "import", log, "-t", fabric, "-o", tmp_path / "r.h5"], capsys)
    _one_error(code, err, needle)
    assert not (tmp_path / "r.h5").exists()


@pytest.mark.parametrize("size", ["99999999999999999999999G", "1e999", "300T", "0"])
def test_simulate_sizes_are_bounded(size, capsys):
    _one_error(*_run(["simulate", RING, "-s", size], capsys), "size")


def test_ids_with_control_characters_are_refused_not_written(tmp_path, capsys):
    src = tmp_path / "f.json"
    doc = json.loads(RING.read_text())
    old = doc["nodes"][0]["id"]
    text = json.dumps(doc).replace(f'"{old}"', '"gpu\\u0001"').replace("gpu\\u0001", "gpu\\u0001")
    src.write_text(text)
    for out in ("o.graphml", "o.json"):
        _one_error(*_run(["convert", src, tmp_path / out], capsys), "U+0001")
        assert not (tmp_path / out).exists()
    src.write_text(json.dumps(doc).replace(f'"{old}"', '"\\ud800"'))
    _one_error(*_run(["convert", src, tmp_path / "o.graphml"], capsys), "U+D800")


@pytest.mark.parametrize("umask, expected", [(0o022, 0o644), (0o002, 0o664)])
def test_outputs_follow_the_umask_and_keep_modes(umask, expected, tmp_path, capsys):
    old = os.umask(umask)
    try:
        out = tmp_path / "algos" / "ring.xml"  # the folder does not exist yet
        assert main(["export", str(RING), "--max-trees-per-root", "1", "-o", str(out)]) == 0
        assert stat.S_IMODE(out.stat().st_mode) == expected
        os.chmod(out, 0o640)
        assert main(["convert", str(RING), str(out.with_suffix(".json"))]) == 0
        assert main(["export", str(RING), "--max-trees-per-root", "1", "-o", str(out)]) == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o640
    finally:
        os.umask(old)
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]


def test_a_path_holding_control_characters_is_one_escaped_error_line(tmp_path, capsys):
    """A file name with a newline printed a forged second ``error:`` line; one with an escape
    sequence reached the terminal (issue 21 item 4). Error lines escape them."""
    for name in ("x\nerror: forged.json", "x\x1b[2J\x1b]0;t\x07.json", "x\u202egnp.json"):
        code, err = _run(["info", tmp_path / name], capsys)
        _one_error(code, err, "no such file")
        assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err
    code, err = _run(["info", tmp_path / "x\nerror: forged.json"], capsys)
    assert "x\\nerror: forged.json" in err
    with pytest.raises(SystemExit) as info:  # argparse's messages too
        main(["solve", "--collective", "x\ny", "--", "\x1b[2J"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and "\x1b" not in err


def test_printable_escapes_what_a_terminal_would_obey():
    from solver.model.values import printable

    assert printable("gpu0 é 中 ok") == "gpu0 é 中 ok"
    assert printable("a\x1b[2Jb\tc\nd\x9b\x7f") == "a\\x1b[2Jb\\tc\\nd\\x9b\\x7f"
    assert printable("\u202eevil\u2066") == "\\u202eevil\\u2066"
    assert printable("\ud800") == "\\ud800"
