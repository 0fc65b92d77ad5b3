"""nccl-tests / rccl-tests importers and ``forestcoll measure import``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from solver.simulate.nccl_tests import LogFormatError, load_log, parse_json, parse_text

DATA = Path(__file__).resolve().parent / "data"
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
    assert m.time[0] == pytest.approx(doc["results"][0]["in_place"]["time"] * 1e-6)
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
            "cannot tell the collective",
        ),
    ],
)
def test_malformed_text_names_the_problem(text, message):
    with pytest.raises(LogFormatError, match=message):
        parse_text(text, "x.log")


def test_malformed_value_names_the_line():
    with pytest.raises(LogFormatError, match=r"nccl_tests_bad_value.log:48: algbw must be a number"):
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
    from solver.io.results_h5 import read_results, read_schedules

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


def test_rank_count_mismatch_warns(tmp_path, capsys):
    from solver.cli import main

    assert load_log(AG_LOG).ranks == 32 and load_log(AR_OLD).ranks == 8
    topo = ROOT / "sample_topologies" / "mi250_2x.json"
    assert (
        main(["measure", "import", str(AR_OLD), "-t", str(topo), "-o", str(tmp_path / "r.h5")]) == 0
    )
    err = capsys.readouterr().err
    assert "warning:" in err and "8 ranks" in err and "32 compute nodes" in err
