"""nccl-tests / rccl-tests importers and ``forestcoll measure import``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from solver.simulate.nccl_tests import LogFormatError, load_log, parse_json, parse_text

DATA = Path(__file__).resolve().parents[1] / "data"
ROOT = DATA.parents[1]
AG_LOG = DATA / "nccl_tests_allgather_2xmi250.log"
AR_OLD = DATA / "nccl_tests_allreduce_1xa100_old.log"
AG_JSON = DATA / "nccl_tests_allgather_2xmi250.json"
BAD = DATA / "nccl_tests_bad_value.log"


def test_new_text_layout():
    m = load_log(AG_LOG)
    assert m.collective == "allgather"
    assert m.tool == "rccl-tests"  # MI250X devices in the log
    assert list(m.size_bytes[:3]) == [1024, 4096, 16384] and m.size_bytes[-1] == 1 << 30
    assert len(m.size_bytes) == 11
    # out-of-place columns: time in us -> s, algbw = size / time
    assert m.time[0] == pytest.approx(45.01e-6)
    np.testing.assert_allclose(m.algbw, m.size_bytes / m.time / 1e9, rtol=0.01, atol=0.006)
    assert m.busbw[-1] == pytest.approx(m.algbw[-1] * 31 / 32, rel=0.01)
    assert np.all(m.time_in_place > m.time)


def test_old_text_layout_without_root_column():
    m = load_log(AR_OLD)  # collective from the file name
    assert m.collective == "allreduce" and m.tool == "nccl-tests"
    assert m.size_bytes[-1] == 1 << 30
    assert m.algbw[-1] == pytest.approx(119.76)
    assert m.busbw[-1] == pytest.approx(209.58)
    m2 = parse_text(AR_OLD.read_text(), "log.txt", collective="allreduce")
    np.testing.assert_array_equal(m2.time, m.time)
    with pytest.raises(LogFormatError, match="cannot tell the collective"):
        parse_text(AR_OLD.read_text(), "log.txt")


def test_json_output():
    m = load_log(AG_JSON)
    t = load_log(AG_LOG)
    assert m.collective == "allgather"
    np.testing.assert_array_equal(m.size_bytes, t.size_bytes)
    np.testing.assert_allclose(m.time, t.time, rtol=1e-3)
    np.testing.assert_allclose(m.algbw, t.algbw, rtol=0.01, atol=0.006)


def test_json_nan_and_missing_out_of_place():
    doc = json.loads(AG_JSON.read_text())
    doc["results"][0]["out_of_place"] = None
    doc["results"][1]["out_of_place"]["alg_bw"] = "nan"
    m = parse_json(json.dumps(doc), "x.json")
    # a row without out-of-place numbers: the whole log is read from its in-place columns
    assert m.variant == "in-place"
    assert m.time_used[0] == pytest.approx(doc["results"][0]["in_place"]["time"] * 1e-6)
    assert math.isnan(m.algbw[1])


@pytest.mark.parametrize(
    "text, message",
    [
        ("hello\n", "no nccl-tests column header"),
        ("# size count type redop root time algbw busbw #wrong\n", "no result rows"),
        (
            "# Collective test starting: all_gather_perf\n# size count type time algbw busbw error\n"
            "1024 8 float 1.0 2.0\n",
            ":3: expected 7 columns",
        ),
        (
            "# Collective test starting: all_gather_perf\n1024 8 float 1.0 2.0 3 0\n",
            ":2: data row before the column header",
        ),
        (
            "# Collective test starting: broadcast_perf\n# size count type time algbw busbw error\n"
            "1024 8 float 1.0 2.0 3 0\n",
            "unsupported collective .broadcast.",
        ),
    ],
)
def test_malformed_text_names_the_problem(text, message):
    with pytest.raises(LogFormatError, match=message):
        parse_text(text, "x.log")


def test_malformed_value_names_the_line():
    with pytest.raises(
        LogFormatError, match=r"nccl_tests_bad_value.log:48: algbw must be a number"
    ):
        load_log(BAD)


def test_malformed_json():
    with pytest.raises(LogFormatError, match=r"x.json:1:2: invalid JSON"):
        parse_json("{,}", "x.json")
    with pytest.raises(LogFormatError, match="no 'results' list"):
        parse_json("{}", "x.json")
    with pytest.raises(LogFormatError, match=r"results\[0\]: missing 'size'"):
        parse_json('{"args": ["all_gather_perf"], "results": [{}]}', "x.json")


def test_measure_import_cli(tmp_path, capsys):
    from solver.cli import main
    from solver.io.hdf5.results import read_results, read_schedules

    out = tmp_path / "r.h5"
    topo = ROOT / "sample_topologies" / "mi250_2x.json"
    assert main(["measure", "import", str(AG_LOG), "--topology", str(topo), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "rccl-tests allgather: 11 sizes" in text
    tables = read_results(out)
    t = tables["measured_allgather_rccl_tests"]
    assert t.source == "rccl-tests" and t.collective == "allgather"
    np.testing.assert_allclose(t.measured_time, load_log(AG_LOG).time)
    np.testing.assert_allclose(t.predicted_algbw, 5312 / 15)
    np.testing.assert_allclose(t.predicted_time, t.size_bytes / (5312 / 15 * 1e9))
    assert any(s.collective == "allgather" for s in read_schedules(out).values())
    # a second import (JSON) reuses the stored schedule and adds a table
    assert (
        main(
            [
                "measure",
                "import",
                str(AG_JSON),
                "-t",
                str(topo),
                "-o",
                str(out),
                "--name",
                "ag_json",
                "--algorithm",
                "rccl-ring",
            ]
        )
        == 0
    )
    tables = read_results(out)
    assert tables["ag_json"].algorithm == "rccl-ring"


def test_measure_import_cli_errors(tmp_path, capsys):
    from solver.cli import main

    topo = ROOT / "sample_topologies" / "mi250_2x.json"
    assert main(["measure", "import", str(BAD), "-t", str(topo), "-o", str(tmp_path / "r.h5")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and ":48:" in err and "Traceback" not in err
    assert (
        main(
            [
                "measure",
                "import",
                str(tmp_path / "missing.log"),
                "-t",
                str(topo),
                "-o",
                str(tmp_path / "r.h5"),
            ]
        )
        == 2
    )
    assert "no such file" in capsys.readouterr().err
    assert not (tmp_path / "r.h5").exists()


def test_measure_help_and_missing_subcommand(capsys):
    from solver.cli import main

    assert main(["measure"]) == 2
    assert "import" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["measure", "import", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1].strip().startswith("forestcoll measure import")


def test_rank_count_mismatch_is_refused(tmp_path, capsys):
    from solver.cli import main

    assert load_log(AG_LOG).ranks == 32 and load_log(AR_OLD).ranks == 8
    topo = ROOT / "sample_topologies" / "mi250_2x.json"
    out = tmp_path / "r.h5"
    assert main(["measure", "import", str(AR_OLD), "-t", str(topo), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "8 ranks" in err and "32 compute nodes" in err
    assert "Traceback" not in err and not out.exists()


# ----------------------------------------------------------------------------- real public logs
REAL = ROOT / "tests" / "data" / "real" / "logs"


@pytest.mark.parametrize(
    "name, collective, tool, ranks, rows, last_algbw",
    [
        # rccl-tests, "#  Rank  0 Group  0 Pid" layout, 8 GPUs in one box
        ("rccl_allreduce_mi300x_1node.log", "allreduce", "rccl-tests", 8, 31, 180.40),
        # older rccl-tests layout: "#   Rank  0 Pid ..." (no Group column)
        ("rccl_allreduce_mi300x_2node.log", "allreduce", "rccl-tests", 16, 32, 190.64),
        ("rccl_allreduce_mi355x_2node.log", "allreduce", "rccl-tests", 16, 31, 196.82),
        ("nccl_allreduce_h100_a3mega_2node.log", "allreduce", "nccl-tests", 16, 31, 180.71),
        # indented inside a README, no rank lines, redop "none": collective from the file name
        ("nccl_allgather_b200_a4_2node.log", "allgather", "nccl-tests", 0, 24, 390.71),
        ("nccl_allgather_h200_a3ultra_2node.log", "allgather", "nccl-tests", 0, 24, 350.77),
        # five 0-byte rows first (sizes below 16 ranks x 4 B round to 0): kept as one row
        ("nccl_allgather_h100_a3mega_gke_2node.log", "allgather", "nccl-tests", 0, 27, 201.32),
    ],
)
def test_real_logs_parse(name, collective, tool, ranks, rows, last_algbw):
    m = load_log(REAL / name)
    assert (m.collective, m.tool, m.ranks, len(m.size_bytes)) == (collective, tool, ranks, rows)
    assert m.variant == "out-of-place" and m.wrong_sizes == ()
    assert m.algbw_used[-1] == pytest.approx(last_algbw)
    sized = m.size_bytes[m.size_bytes > 0]
    assert np.all(np.diff(sized) > 0) and np.all(
        m.size_bytes[: len(m.size_bytes) - len(sized)] == 0
    )
    # algbw = size / time, as nccl-tests prints it (2 decimals)
    np.testing.assert_allclose(m.algbw_used, m.size_bytes / m.time_used / 1e9, rtol=0.02, atol=0.01)


def test_wrong_rows_are_dropped_and_listed():
    text = (REAL / "rccl_allreduce_mi300x_1node.log").read_text()
    # a copy of the real log with one corrupted result: "#wrong" 3 at 1 MiB (out-of-place)
    bad = text.replace(
        "     1048576        262144     float     sum      -1    28.39   36.94   64.64      0",
        "     1048576        262144     float     sum      -1    28.39   36.94   64.64      3",
    )
    assert bad != text
    m = parse_text(bad, "x_allreduce.log")
    assert m.wrong_sizes == (1048576,)
    assert 1048576 not in m.size_bytes and len(m.size_bytes) == 30


def test_multi_gpu_process_log_counts_every_gpu():
    # "-g 8": one process, eight "#   Rank" lines (one per GPU)
    m = load_log(AR_OLD, "allreduce")
    assert m.ranks == 8


def test_measure_import_refuses_rank_mismatch_and_names_variant(tmp_path, capsys):
    from solver.cli import main
    from solver.io.formats import save
    from solver.simulate.calibration import LOGS

    log = REAL / "rccl_allreduce_mi300x_2node.log"
    wrong = ROOT / "sample_topologies" / "dgx_a100_1x.json"  # 8 GPUs, the log ran on 16
    out = tmp_path / "r.h5"
    assert main(["measure", "import", str(log), "-t", str(wrong), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "16 ranks" in err and "8 compute nodes" in err
    assert not out.exists()
    fabric = tmp_path / "mi300x_2.json"
    save(next(g for g in LOGS if g.file == log.name).topology(), fabric)
    assert main(["measure", "import", str(log), "-t", str(fabric), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "using the out-of-place columns (16 ranks)" in text
    assert "rccl-tests allreduce: 32 sizes" in text
