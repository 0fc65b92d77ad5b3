"""Opening a results file (.h5) shows the result saved in it on its fabric (issue 14 item 1):
cut, heat map, trees, summary and the plot's simulated and measured lines, not an empty result."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage

from fc_gui.controllers.results import install
from fc_gui.main_window import MainWindow
from solver.model.results import ResultTable

ROOT = Path(__file__).resolve().parents[3]
RING8 = ROOT / "sample_topologies" / "ring_8.json"


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """``forestcoll simulate ring_8.json -o`` plus a measured table: a results file with a
    schedule, simulated tables (the nccl one included) and a measurement."""
    from solver.cli import main
    from solver.io.hdf5.results import write_results

    path = tmp_path_factory.mktemp("saved") / "ring8.h5"
    assert (
        main(
            [
                "simulate",
                str(RING8),
                "-s",
                "1K:1G:16",
                "-a",
                "forestcoll,nccl,ring",
                "-o",
                str(path),
            ]
        )
        == 0
    )
    sizes = np.array([1 << 20, 1 << 24], np.int64)
    nan = np.full(2, np.nan)
    write_results(
        path,
        "measured_allgather_nccl_tests",
        ResultTable(
            "allgather",
            "measured",
            "nccl-tests",
            sizes,
            nan,
            nan.copy(),
            np.array([1e-4, 1e-3]),
            np.array([10.5, 16.8]),
        ),
    )
    return path


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(None, settings=settings, state_dir=tmp_path / "state", install_results=False)
    w.results_controller = install(w, warmup=False)
    w.file_actions.confirm_discard = lambda reason="": True
    w.resize(1200, 800)
    w.show()
    yield w
    w.results_controller.shutdown()
    w.undo_stack.setClean()
    w.close()
    w.deleteLater()


def test_opening_a_results_file_shows_its_saved_result(window, saved, errors):
    from solver.io.hdf5.results import read_schedules

    (stored,) = read_schedules(saved).values()
    rc = window.results_controller
    assert window.file_actions.open_path(saved)
    assert errors == []
    assert window.document.to_topology().compute_ids == stored.topology.compute_ids
    s = rc.state.schedule
    assert s is not None and not rc.state.stale
    assert s.optimal_algbw_exact == stored.optimal_algbw_exact and len(s.trees) == len(stored.trees)
    assert rc.panel.collective == "allgather"
    assert "allgather" in rc.summary.text()
    assert (
        rc.overlays.cut.badge is not None and "8·200/7 = 228.571 GB/s" in rc.overlays.cut.label_text
    )
    assert set(rc.overlays.heat.colors) == {(ll.source, ll.target) for ll in s.link_load}
    assert rc.trees_view.model.rowCount() > 0
    labels = rc.plots.labels()
    assert labels[0].startswith("bound ") and labels[1] == "α-β estimate"
    assert labels[2] == "ForestColl" and labels[3].startswith("nccl (")  # legend order
    assert labels[4:] == ["ring", "measured allgather"]
    assert {t.algorithm for t in rc.state.simulated.values()} == {"forestcoll", "nccl", "ring"}
    # the file is not a fabric file to save over: Save asks for a name
    assert window.file_path is None
    # another fabric drops all of it
    assert window.file_actions.open_path(RING8)
    assert rc.state.schedule is None and rc.plots.labels() == [] and rc.state.simulated == {}


def test_a_results_file_whose_schedule_was_removed_opens_its_fabric_only(
    window, saved, tmp_path, errors
):
    import shutil

    import h5py

    path = tmp_path / "fabric_only.h5"
    shutil.copy(saved, path)
    with h5py.File(path, "r+") as f:  # a file whose schedule someone deleted
        for name in list(f["schedules"]):
            del f["schedules"][name]
    assert window.file_actions.open_path(path)
    assert errors == []
    assert len(window.document.to_topology().compute_ids) == 8
    rc = window.results_controller
    assert rc.state.schedule is None and rc.state.simulated == {}
    assert rc.plots.labels() == ["measured allgather"]  # measurements need no schedule


def test_a_broken_results_file_is_one_line(window, tmp_path, errors):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"\x89HDF\r\n\x1a\n not really")
    assert not window.file_actions.open_path(bad)
    assert errors and "\n" not in errors[-1][1]


@pytest.mark.slow
def test_gui_command_opens_a_results_file_with_its_result(saved, tmp_path):
    """``forestcoll gui FILE.h5 --screenshot`` (no --solve) draws the saved result."""
    out = tmp_path / "shot.png"
    env = {
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path),
    }
    run = subprocess.run(
        [sys.executable, "-m", "solver.cli", "gui", str(saved), "--screenshot", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    image = QImage(str(out))
    assert not image.isNull() and image.width() > 800


def _plan_file(tmp_path, boxes: int) -> Path:
    from solver.algorithm.compressed import solve_compressed
    from solver.io import templates
    from solver.io.hdf5.plans import write_plan

    path = tmp_path / f"plan{boxes}.h5"
    write_plan(path, solve_compressed(templates.dgx_h100_rail(boxes)))
    return path


def test_a_compressed_plan_opens_expanded_into_its_full_schedule(window, tmp_path, errors):
    from solver.algorithm.verify import verify_schedule
    from solver.io.hdf5.plans import read_plans

    path = _plan_file(tmp_path, 4)  # 32 GPUs: box 0's trees plus 3 translates of each
    (plan,) = read_plans(path).values()
    assert plan.order == 4 and len(plan.base.trees) * 4 == plan.num_trees
    assert window.file_actions.open_path(path)
    assert errors == []
    rc = window.results_controller
    s = rc.state.schedule
    assert s is not None and len(s.trees) == plan.num_trees  # every root's trees, not box 0's
    assert {t.root for t in s.trees} == set(s.topology.compute_ids)
    verify_schedule(s)
    assert s.algbw_exact == plan.optimal_algbw_exact
    assert rc.overlays.cut.badge is not None and rc.overlays.cut.badge.isVisible()
    assert f"expanded to {plan.num_trees} trees" in window.statusBar().currentMessage()


def test_a_plan_too_large_to_draw_opens_its_fabric_and_says_why(
    window, tmp_path, errors, monkeypatch
):
    from fc_gui.controllers import results_file

    monkeypatch.setattr(results_file, "PLAN_EXPAND_MAX_N", 16)
    path = _plan_file(tmp_path, 4)
    assert window.file_actions.open_path(path)
    assert errors == []
    assert window.results_controller.state.schedule is None  # never a partial forest
    assert len(window.document.to_topology().compute_ids) == 32
    message = window.statusBar().currentMessage()
    assert "not drawn" in message and "forestcoll show" in message and "--verify" in message


@pytest.mark.parametrize(
    "kind,name",
    [
        ("schedule", "zero-cut"),
        ("schedule", "forged-optimum"),
        ("schedule", "real-cut-forged-optimum"),
        ("plan", "generator-gpu-to-switch"),
        ("plan", "order-8"),
    ],
)
def test_a_forged_results_file_opens_its_fabric_and_a_dialog_not_the_lie(
    kind, name, window, saved, tmp_path, errors
):
    """Issue 21: a forged cut was drawn as the saved result ("algbw* = 8·0/8 = 0 GB/s"); a
    generator mapping a GPU to a switch ended in "unexpected KeyError". The saved result is
    verified first: the fabric opens, the dialog names the rule, nothing of the lie is shown."""
    import shutil

    import h5py
    from fuzz.forged import PLAN_FORGERIES, SCHEDULE_FORGERIES

    forge = (SCHEDULE_FORGERIES if kind == "schedule" else PLAN_FORGERIES)[name][0]
    path = tmp_path / "forged.h5"
    shutil.copy(saved if kind == "schedule" else _plan_file(tmp_path, 4), path)
    with h5py.File(path, "r+") as f:
        forge(f)
    assert window.file_actions.open_path(path)
    assert len(errors) == 1 and "failed verification" in errors[0][1], errors
    assert "\n" not in errors[0][1]
    rc = window.results_controller
    assert rc.state.schedule is None
    assert rc.overlays.cut.badge is None or not rc.overlays.cut.badge.isVisible()
    assert window.document.to_topology().compute_ids  # the fabric itself is open


def test_a_large_results_file_is_read_in_the_background(
    window, saved, qtbot, errors, monkeypatch, tmp_path
):
    """Beyond BACKGROUND_READ_BYTES the saved result is read and verified in a worker: the open
    returns at once with a status line, the result arrives later; opening another fabric first
    drops it; a refusal is a dialog, as for a small file."""
    from fc_gui.controllers import file_actions

    monkeypatch.setattr(file_actions, "BACKGROUND_READ_BYTES", 0)
    fa, rc = window.file_actions, window.results_controller
    with qtbot.waitSignal(fa.saved_reader.done, timeout=60000):
        assert fa.open_path(saved)
        assert rc.state.schedule is None  # not yet: the worker reads and verifies it
        assert "reading and verifying" in window.statusBar().currentMessage()
    assert errors == [] and rc.state.schedule is not None
    assert "8·200/7 = 228.571 GB/s" in rc.overlays.cut.label_text
    # another fabric opened while a result is being read: that result never lands on it
    assert fa.open_path(saved)
    assert fa.open_path(RING8)
    qtbot.wait(1500)
    assert rc.state.schedule is None and errors == []
    # a forged result is refused by the worker's verification in a dialog; its fabric stays
    import shutil

    import h5py
    from fuzz.forged import SCHEDULE_FORGERIES

    forged = tmp_path / "forged.h5"
    shutil.copy(saved, forged)
    with h5py.File(forged, "r+") as f:
        SCHEDULE_FORGERIES["zero-cut"][0](f)
    with qtbot.waitSignal(fa.saved_reader.failed, timeout=60000):
        assert fa.open_path(forged)
    assert len(errors) == 1 and "failed verification" in errors[0][1] and "\n" not in errors[0][1]
    assert rc.state.schedule is None and window.document.to_topology().compute_ids
