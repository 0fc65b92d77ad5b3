"""Measured versus predicted in the designer (issue 20 item 6), on real files: an MI300X dump
(tests/data/real/topo/rccl_topo_8p_940.xml) and a raw rccl-tests log of that machine
(tests/data/real/logs/rccl_allreduce_mi300x_1node.log, 8 B .. 8 GiB)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF

import solver
from fc_gui.controllers.file_actions import read_fabric
from fc_gui.model.measured import compare, default_reference, simulation_sizes, with_bound
from solver.model.results import ResultTable
from solver.simulate.nccl_tests import load_log

REAL = Path(__file__).resolve().parents[2] / "data" / "real"
DUMP = REAL / "topo" / "rccl_topo_8p_940.xml"
LOG = REAL / "logs" / "rccl_allreduce_mi300x_1node.log"
LOG_16 = REAL / "logs" / "rccl_allreduce_mi300x_2node.log"
GIB = 1 << 30


# ---------------------------------------------------------------------- the model, without Qt
def test_compare_gives_the_error_of_the_same_size_only():
    rows = compare([1024, 2048, 4096], [10.0, 20.0, 40.0], [1024, 4096], [12.0, 30.0], 50.0)
    assert [r.predicted for r in rows[::2]] == [12.0, 30.0]
    assert math.isnan(rows[1].predicted) and math.isnan(rows[1].error_pct)
    assert rows[0].error_pct == pytest.approx(20.0)
    assert rows[2].error_pct == pytest.approx(-25.0)
    assert rows[2].of_bound_pct == pytest.approx(80.0)
    assert rows[2].cells() == ("4K", "40", "30", "-25.0", "80")
    assert compare([1 << 30], [179.24], [1 << 30], [174.04])[0].cells()[:3] == (
        "1G",
        "179.2",
        "174.0",
    )
    assert compare([1024], [0.07258], None, None)[0].cells()[1:3] == ("0.07258", "–")
    assert rows[1].cells()[2:4] == ("–", "–")


def test_default_reference_is_the_library_for_a_library_measurement():
    names = ["bound 219.4 GB/s", "α-β estimate", "ForestColl", "nccl (ring)", "ring"]
    assert default_reference("measured allreduce", names) == "nccl (ring)"
    assert default_reference("measured forestcoll", names) == "ForestColl"
    assert default_reference("measured allreduce", names[:3]) == "ForestColl"
    assert default_reference("measured allreduce", []) == ""


def test_simulation_sizes_add_the_measured_sizes_of_that_collective():
    meas = load_log(LOG)
    table = meas.table()
    other = ResultTable(
        "allgather",
        "measured",
        "nccl-tests",
        np.array([3 << 33]),
        np.array([np.nan]),
        np.array([np.nan]),
        np.array([1.0]),
        np.array([1.0]),
    )
    sizes = simulation_sizes([1024, 1 << 20], [table, other], "allreduce")
    assert sizes[0] == 8 and sizes[-1] == 8 * GIB and 1024 in sizes
    assert 3 << 33 not in sizes and sizes == sorted(set(sizes))


def test_with_bound_fills_the_prediction_as_measure_import_does():
    schedule = solver.solve(read_fabric(DUMP)[0], "allreduce")
    table = with_bound(load_log(LOG).table(), schedule, "allreduce")
    opt = float(schedule.optimal_algbw_exact)
    assert table.schedule == "allreduce"
    assert np.allclose(table.predicted_algbw, opt)
    assert np.allclose(table.predicted_time, table.size_bytes / (opt * 1e9))
    other = solver.solve(read_fabric(DUMP)[0], "allgather")
    assert np.isnan(with_bound(load_log(LOG).table(), other, "x").predicted_algbw).all()


# ---------------------------------------------------------------------- the window
@pytest.fixture
def mi300x(make_results_window, qtbot):
    """The MI300X dump solved (allreduce) and simulated in a results window."""
    w = make_results_window(read_fabric(DUMP)[0], solve_fn=solver.solve)
    rc = w.results_controller
    rc.panel.set_collective("allreduce")
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=60000):
        assert rc.solving.solve()
    with qtbot.waitSignal(rc.simulation.task.done, timeout=120000):
        rc.plots.simulate_button.click()
    return w


def import_log(qtbot, rc, path, resimulates=True):
    """Import ``path``; wait for it (and for the simulation run again over its sizes)."""
    if resimulates:
        with qtbot.waitSignals([rc.measurements.imported, rc.simulation.task.done], timeout=120000):
            assert rc.measurements.import_file(str(path))
    else:
        with qtbot.waitSignal(rc.measurements.imported, timeout=30000):
            assert rc.measurements.import_file(str(path))


def test_a_raw_log_is_compared_size_by_size_with_the_simulation(mi300x, qtbot, errors):
    rc = mi300x.results_controller
    plots = rc.plots
    assert max(t.size_bytes.max() for t in rc.state.simulated.values()) == GIB
    import_log(qtbot, rc, LOG)
    assert not errors
    meas = load_log(LOG)
    # the simulation now covers every measured size (8 B .. 8 GiB), and the grid before
    nccl = next(t for t in rc.state.simulated.values() if t.algorithm == "nccl")
    assert set(meas.size_bytes) <= set(nccl.size_bytes.tolist()) and 1024 in nccl.size_bytes
    assert "at 31 sizes" in plots.status.text()  # the 1K:1G:4 grid is among them
    # the lines simulated again do not take the colour of the measured one (or of each other)
    assert len(set(plots.colors.values())) == len(plots.colors) == 9
    # the error table: one row per measured size, against the library's line
    table = plots.error_table
    assert table.isVisible()
    assert table.measured_choice() == "measured allreduce"
    assert table.reference_choice().startswith("rccl (")  # the library the gfx942 dump runs
    cells = table.cell_texts()
    assert len(cells) == len(meas.size_bytes) == 31
    i = list(meas.size_bytes).index(GIB)
    predicted = float(nccl.predicted_algbw[list(nccl.size_bytes).index(GIB)])
    measured = float(meas.algbw_used[i])
    assert cells[i][0] == "1G" and cells[i][1] == f"{measured:.1f}" == "179.2"
    assert cells[i][2] == (f"{predicted:.1f}" if predicted >= 100 else f"{predicted:.4g}")
    assert cells[i][3] == f"{100 * (predicted - measured) / measured:+.1f}"
    opt = float(rc.state.schedule.optimal_algbw_exact)
    assert cells[i][4] == f"{100 * measured / opt:.0f}"
    # the hover read-out: the measured point, the predicted one and the error
    readings = plots.hover.show_at(QPointF(math.log10(GIB), 0.0))
    line = next(r for r in readings if r.name == "measured allreduce")
    assert line.size == GIB
    assert line.note == (
        f"{table.reference_choice()} {predicted:.1f} GB/s, error "
        f"{100 * (predicted - measured) / measured:+.1f} %"
    )
    assert "measured allreduce: 1G 179.2 GB/s (rccl (" in plots.hover.text
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    QApplication.sendEvent(plots.plot, QEvent(QEvent.Type.Leave))  # the mouse leaves the plot
    assert not plots.hover.box.isVisible() and plots.hover.text == ""
    # another reference: ForestColl's simulated line
    table.reference_box.setCurrentText("ForestColl")
    fc = next(t for t in rc.state.simulated.values() if t.algorithm == "forestcoll")
    fc_1g = float(fc.predicted_algbw[list(fc.size_bytes).index(GIB)])
    assert table.cell_texts()[i][2] == (f"{fc_1g:.1f}" if fc_1g >= 100 else f"{fc_1g:.4g}")
    plots.hover.show_at(QPointF(math.log10(GIB), 0.0))
    assert f"ForestColl {fc_1g:.1f} GB/s, error" in plots.hover.text


def test_measured_tables_go_into_the_results_file_and_come_back(
    mi300x, qtbot, tmp_path, make_results_window, errors
):
    from solver.io.hdf5.results import read_results

    rc = mi300x.results_controller
    import_log(qtbot, rc, LOG)
    out = tmp_path / "mi300x.h5"
    assert rc.exports.export_h5(out) == out
    stored = read_results(out)
    measured = {n: t for n, t in stored.items() if np.isfinite(t.measured_algbw).any()}
    assert list(measured) == ["measured_allreduce_rccl_tests"]
    (table,) = measured.values()
    meas = load_log(LOG)
    assert np.array_equal(table.size_bytes, meas.size_bytes)
    assert np.allclose(table.measured_algbw, meas.algbw_used)
    assert np.allclose(table.predicted_algbw, float(rc.state.schedule.optimal_algbw_exact))
    assert table.attrs["file"] == LOG.name and table.attrs["ranks"] == 8
    assert any(t.algorithm == "nccl" and t.size_bytes.max() == 8 * GIB for t in stored.values())
    # exporting again adds to the same file (no second copy of the measurement)
    assert rc.exports.export_h5(out) == out
    assert [n for n, t in read_results(out).items() if np.isfinite(t.measured_algbw).any()] == [
        "measured_allreduce_rccl_tests"
    ]

    other = make_results_window(solve_fn=solver.solve)
    orc = other.results_controller
    assert other.file_actions.open_path(out)
    assert not errors
    assert list(orc.state.measured) == ["measured_allreduce_rccl_tests"]
    assert orc.plots.error_table.isVisible()
    cells = orc.plots.error_table.cell_texts()
    assert len(cells) == 31 and cells[list(meas.size_bytes).index(GIB)][1] == "179.2"
    assert all(row[2] != "–" for row in cells)  # the saved simulation covers every size
    # and the file imports as measurements too (Import measurements… on the same fabric)
    before = len(orc.state.measured)
    import_log(qtbot, orc, out, resimulates=False)
    assert len(orc.state.measured) == before + 1


def test_logs_and_files_that_do_not_fit_are_one_line_dialogs(mi300x, qtbot, tmp_path, errors):
    rc = mi300x.results_controller
    with qtbot.waitSignal(rc.measurements.task.failed, timeout=30000):
        rc.measurements.import_file(str(LOG_16))
    assert len(errors) == 1
    title, text = errors[-1]
    assert title == "Import failed" and "16 ranks" in text and "8 compute" in text
    assert "\n" not in text
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\nthis is not a log\n", encoding="utf-8")
    with qtbot.waitSignal(rc.measurements.task.failed, timeout=30000):
        rc.measurements.import_file(str(junk))
    assert "measure import" in errors[-1][1] and "\n" not in errors[-1][1]
    assert not rc.state.measured and not rc.plots.error_table.isVisible()


def test_the_library_selector_simulates_with_the_chosen_library(mi300x, qtbot):
    rc = mi300x.results_controller
    plots = rc.plots
    assert plots.library_text() == "auto"
    # the dump's GPUs are gfx942: RCCL's CDNA3 model, said with the reason
    assert "library rccl cdna3 (AMD GPUs (gcn gfx942))" in plots.status.text()
    before = {t.algorithm: t.predicted_algbw.copy() for t in rc.state.simulated.values()}
    with qtbot.waitSignal(rc.simulation.task.done, timeout=120000):
        plots.library_box.setCurrentText("nccl:ampere")
        plots.library_box.lineEdit().editingFinished.emit()
    assert plots.library_text() == "nccl:ampere"
    assert "library nccl ampere (chosen in the Plots dock)" in plots.status.text()
    nccl = next(t for t in rc.state.simulated.values() if t.algorithm == "nccl")
    assert nccl.attrs["library"] == "nccl"
    fc = next(t for t in rc.state.simulated.values() if t.algorithm == "forestcoll")
    assert not np.allclose(fc.predicted_algbw, before["forestcoll"])  # other link efficiency
    # a bad value is refused in place and simulates nothing
    plots.library_box.setCurrentText("rccl:cdna9")
    plots.library_box.lineEdit().editingFinished.emit()
    assert "library refused" in plots.status.text() and "cdna9" in plots.status.text()
    assert "d32f2f" in plots.library_box.styleSheet()
    assert not rc.simulation.task.is_running()


def test_nothing_of_the_old_fabric_stays_when_another_opens(mi300x, qtbot, tmp_path):
    from results_fixtures import ring4

    from solver.io import v1

    rc = mi300x.results_controller
    plots = rc.plots
    import_log(qtbot, rc, LOG)
    plots.library_box.setCurrentText("rccl:cdna3")
    plots._library_chosen()
    qtbot.waitUntil(lambda: not rc.simulation.task.is_running(), timeout=120000)
    plots.hover.show_at(QPointF(math.log10(GIB), 0.0))
    assert plots.hover.box.isVisible() and plots.status.text()
    path = tmp_path / "ring4.json"
    path.write_text(v1.dumps(ring4()), encoding="utf-8")
    assert mi300x.file_actions.open_path(path)
    assert not plots.lines and not plots.legend.items
    assert not plots.hover.box.isVisible() and plots.hover.text == ""
    assert plots.status.text() == "" and plots.note == ""
    assert not plots.error_table.isVisible() and plots.error_table.cell_texts() == []
    assert rc.state.measured == {} and rc.state.simulated == {}
    assert plots.library_text() == "auto" and plots.library_box.currentText() == "auto"
    assert rc.state.schedule is None
    (x0, x1), (_, y1) = plots.plot_item.vb.viewRange()
    assert (x0, x1) == pytest.approx((3.0, 9.65))  # not the old fabric's 8 B .. 8 GiB
    assert y1 < 2  # nor its GB/s


def test_a_measurement_of_another_collective_is_not_compared(mi300x, qtbot):
    rc = mi300x.results_controller
    import_log(qtbot, rc, LOG)  # allreduce
    rc.panel.set_collective("allgather")
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=60000):
        assert rc.solving.solve()
    table = rc.plots.error_table
    assert table.isVisible()
    assert "measured allreduce, the result shown is allgather: solve allreduce" in table.note.text()
    assert {row[2] for row in table.cell_texts()} == {"–"}  # nothing predicted for it
    assert {row[4] for row in table.cell_texts()} == {"–"}  # nor a bound
    readings = rc.plots.hover.show_at(QPointF(math.log10(GIB), 0.0))
    assert next(r for r in readings if r.name == "measured allreduce").note == ""
    # and the allgather simulation does not take the allreduce sizes
    assert rc.simulation.sizes(rc.state.schedule)[0] == 1024


def test_a_run_all_collectives_log_gives_one_line_per_collective(mi300x, qtbot, tmp_path):
    # nccl-tests' "run all collectives" scripts write the runs one after another in one file;
    # the designer takes every run it compares (here allreduce and allgather), not only one
    rc = mi300x.results_controller
    ar = LOG.read_text()
    ag = ar.replace("all_reduce_perf", "all_gather_perf")
    bcast = ar.replace("all_reduce_perf", "broadcast_perf")
    both = tmp_path / "all_collectives.log"
    both.write_text(ar + "\n" + bcast + "\n" + ag)
    counts = []
    rc.measurements.imported.connect(counts.append)
    import_log(qtbot, rc, both)
    assert counts == [2]
    assert sorted(t.collective for t in rc.state.measured.values()) == [
        "allgather",
        "allreduce",
    ]
    # the error table compares the run of the shown collective (allreduce)
    table = rc.plots.error_table
    assert table.measured_choice() == "measured allreduce"
    assert len(table.cell_texts()) == len(load_log(LOG).size_bytes)
    # two runs of one collective are still refused in one line
    twice = tmp_path / "twice.log"
    twice.write_text(ar + "\n" + ar)
    from fc_gui.controllers.measurements import read_measurements

    with pytest.raises(solver.ForestCollError, match="2 allreduce runs in one log"):
        read_measurements(twice, 8)
