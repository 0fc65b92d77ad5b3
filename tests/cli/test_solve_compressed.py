"""``forestcoll solve --compressed`` and reading the plan back with ``show``/``export``."""

from __future__ import annotations

import pytest

from solver.cli import main
from solver.io import formats, templates
from solver.io.hdf5.plans import read_plans


@pytest.fixture(scope="module")
def rail_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("rail") / "rail3.json"
    formats.save(templates.dgx_h100_rail(3), path)
    return path


def test_solve_compressed_writes_a_verified_plan(rail_file, tmp_path, capsys):
    out = tmp_path / "plan.h5"
    assert main(["solve", str(rail_file), "--compressed", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "x 3 translates" in text
    assert "verified:   yes" in text
    plan = read_plans(out)["allgather"]
    assert plan.order == 3
    assert main(["show", str(out), "--verify", "--trees", "allgather"]) == 0
    shown = capsys.readouterr().out
    assert "plans (1):" in shown and "verified: plan allgather" in shown
    assert "representative trees of plan allgather" in shown


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--json"], "no --json document"),
        (["-o", "plan.json"], "saved to a .h5"),
        (["--max-trees-per-root", "1"], "without --max-trees-per-root"),
        (["--collective", "allreduce"], "allgather"),
    ],
)
def test_compressed_refusals_are_one_line(rail_file, tmp_path, monkeypatch, capsys, extra, message):
    monkeypatch.chdir(tmp_path)
    assert main(["solve", str(rail_file), "--compressed", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_automatic_threshold(rail_file, tmp_path, monkeypatch, capsys):
    """Below the threshold solve keeps a full schedule; with the threshold lowered it keeps a
    plan, and --no-compressed overrides it."""
    from solver.cli import solve as solve_cli

    assert main(["solve", str(rail_file)]) == 0
    assert "compressed" not in capsys.readouterr().out
    monkeypatch.setattr(solve_cli, "COMPRESS_MIN_N", 8)
    assert main(["solve", str(rail_file)]) == 0
    assert "compressed:" in capsys.readouterr().out
    assert main(["solve", str(rail_file), "--no-compressed"]) == 0
    assert "compressed" not in capsys.readouterr().out


def test_automatic_plan_on_a_three_tier_clos(tmp_path, monkeypatch, capsys):
    """Racks of a 3-tier Clos are boxes of the odometer σ (zones move along): over the
    threshold solve keeps a verified plan; with --json, which a plan has not, a full schedule."""
    import json

    from solver.cli import solve as solve_cli

    path = tmp_path / "clos3.json"
    formats.save(templates.clos3(zones=2, racks_per_zone=4), path)
    monkeypatch.setattr(solve_cli, "COMPRESS_MIN_N", 64)
    out = tmp_path / "plan.h5"
    assert main(["solve", str(path), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "x 8 translates" in text and "verified:   yes" in text
    assert read_plans(out)["allgather"].order == 8
    assert main(["solve", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["trees"]) >= 128
