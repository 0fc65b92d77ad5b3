"""Compressed plans in results files: round trip, schema 1.2, 1.1 files, forged generators."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from solver import solve
from solver.algorithm.compressed import solve_compressed
from solver.algorithm.verify_plan import verify_compressed
from solver.cli import main
from solver.io import templates
from solver.io.hdf5.plans import read_plans, write_plan
from solver.io.hdf5.results import ResultsFileError, read_schedules, summarize, write_schedule


@pytest.fixture(scope="module")
def plan():
    return solve_compressed(templates.dgx_h100_rail(3))


@pytest.fixture()
def plan_file(plan, tmp_path):
    path = tmp_path / "plan.h5"
    write_plan(path, plan)
    return path


def test_round_trip_keeps_everything_and_verifies(plan, plan_file):
    back = read_plans(plan_file)["allgather"]
    assert back.base == plan.base
    assert back.order == plan.order
    assert np.array_equal(back.generator, plan.generator)
    verify_compressed(back)
    with h5py.File(plan_file) as f:
        assert f.attrs["schema_version"] == "1.2"
        assert f["plans/allgather/generator"].shape == (len(plan.topology.nodes),)
        # only the representatives are stored
        assert len(f["plans/allgather/trees/root"]) == len(plan.representatives)
    assert "compressed: " in summarize(plan_file)


def test_a_plan_is_invisible_to_the_schedule_reader(plan, plan_file):
    """What a 1.1 reader reads (``/schedules``) holds no plan: it never sees the
    representatives as a whole schedule."""
    assert read_schedules(plan_file) == {}


def test_a_plan_added_to_a_1_1_file_raises_its_version(plan, tmp_path):
    path = tmp_path / "old.h5"
    schedule = solve(plan.topology)
    write_schedule(path, schedule)
    with h5py.File(path, "r+") as f:
        f.attrs["schema_version"] = "1.1"
    assert read_plans(path) == {}  # a 1.1 file reads, with no plans
    write_plan(path, plan)
    with h5py.File(path) as f:
        assert f.attrs["schema_version"] == "1.2"
    assert list(read_schedules(path)) == ["allgather"]
    assert list(read_plans(path)) == ["allgather"]


def _forge(path, edit):
    with h5py.File(path, "r+") as f:
        edit(f["plans/allgather"])


def _replace(g, data):
    del g["generator"]
    g.create_dataset("generator", data=data)


FORGED = {
    "short": (lambda g: _replace(g, g["generator"][:-1]), "expected"),
    "out of range": (lambda g: _replace(g, np.full(g["generator"].shape, 10**6)), "outside"),
    "negative": (lambda g: _replace(g, -np.ones(g["generator"].shape, dtype=np.int32)), "outside"),
    "not a permutation": (
        lambda g: _replace(g, np.zeros(g["generator"].shape, np.int32)),
        "not a permutation",
    ),
    "floats": (lambda g: _replace(g, g["generator"][()].astype(float)), "integer dataset"),
    "2-d": (lambda g: _replace(g, g["generator"][()].reshape(1, -1)), "shape"),
    "order 0": (lambda g: g.attrs.__setitem__("order", 0), "order"),
    "order huge": (lambda g: g.attrs.__setitem__("order", 2**40), "order"),
}


@pytest.mark.parametrize("case", list(FORGED))
def test_forged_generators_are_one_line_errors(case, plan_file, capsys):
    edit, message = FORGED[case]
    _forge(plan_file, edit)
    with pytest.raises(ResultsFileError, match=message):
        read_plans(plan_file)
    assert main(["show", str(plan_file), "--verify"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err


def test_a_forged_automorphism_fails_verification(plan_file, capsys):
    """A permutation that reads fine but is not an automorphism: show --verify names it."""

    def swap(g):
        gen = g["generator"][()]
        gen[[0, 1]] = gen[[1, 0]]
        _replace(g, gen)

    _forge(plan_file, swap)
    assert main(["show", str(plan_file), "--verify"]) == 2
    err = capsys.readouterr().err
    assert "failed verification" in err and err.count("\n") == 1
