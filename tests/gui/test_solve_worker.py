"""SolveWorker / JitWarmup / SolvePanel: signals, cancel, errors, threads."""

from __future__ import annotations

import threading

import pytest
from results_fixtures import FakeSolver, failing_solver, ring4, ring4_schedule

from fc_gui.controllers.solve_worker import JitWarmup, SolveWorker, one_line, warmup_topology
from fc_gui.views.solve_panel import SolvePanel
from solver.model.errors import SolverError, TopologyError
from solver.model.schedule import Schedule
from solver.model.topology import validate


def test_finished_carries_schedule_and_runs_off_the_gui_thread(qtbot):
    fake = FakeSolver(0.1)
    worker = SolveWorker(solve_fn=fake)
    progress = []
    worker.progress.connect(lambda phase, frac: progress.append((phase, frac)))
    with qtbot.waitSignal(worker.finished, timeout=5000) as blocker:
        worker.start(ring4(), "reduce-scatter", 3)
    schedule = blocker.args[0]
    assert isinstance(schedule, Schedule)
    assert schedule.optimal_algbw_exact == ring4_schedule().optimal_algbw_exact
    assert fake.calls[0]["collective"] == "reduce-scatter"
    assert fake.calls[0]["max_trees_per_root"] == 3
    assert fake.thread_names[0] != threading.main_thread().name
    assert progress, "no progress signal"
    assert progress[-1] == ("trees", 1.0)
    assert {p for p, _ in progress} == {"optimum", "trees"}
    assert not worker.is_running()
    assert worker.last_elapsed is not None and worker.last_elapsed >= 0.1
    assert worker.wait(2000)


def test_cancel_emits_cancelled_not_finished(qtbot):
    worker = SolveWorker(solve_fn=FakeSolver(5.0))
    finished = []
    worker.finished.connect(finished.append)
    with qtbot.waitSignal(worker.started, timeout=1000):
        worker.start(ring4())
    assert worker.is_running()
    qtbot.wait(100)
    with qtbot.waitSignal(worker.cancelled, timeout=2000):
        worker.cancel()
    assert not worker.is_running()
    assert worker.wait(2000)
    qtbot.wait(50)
    assert finished == []


def test_failed_gives_the_one_line_message(qtbot):
    worker = SolveWorker(solve_fn=failing_solver("switch 'sw0' is unbalanced"))
    with qtbot.waitSignal(worker.failed, timeout=3000) as blocker:
        worker.start(ring4())
    assert blocker.args == ["switch 'sw0' is unbalanced"]
    assert worker.wait(2000)


def test_unexpected_exception_becomes_one_line_internal_error(qtbot, capsys):
    worker = SolveWorker(solve_fn=FakeSolver(0.01, ZeroDivisionError("division by zero\nmore")))
    with qtbot.waitSignal(worker.failed, timeout=3000) as blocker:
        worker.start(ring4())
    message = blocker.args[0]
    assert message == "internal error: ZeroDivisionError: division by zero"
    assert "\n" not in message
    assert worker.wait(2000)


def test_restart_drops_the_superseded_result(qtbot):
    slow = FakeSolver(1.0)
    worker = SolveWorker(solve_fn=slow)
    results = []
    worker.finished.connect(results.append)
    cancelled = []
    worker.cancelled.connect(lambda: cancelled.append(1))
    worker.start(ring4(), "allgather")
    qtbot.wait(50)
    slow.duration = 0.05
    with qtbot.waitSignal(worker.finished, timeout=5000):
        worker.start(ring4(), "allreduce")
    assert worker.wait(3000)
    qtbot.wait(100)
    assert len(results) == 1
    assert cancelled == []  # a superseded solve is silent
    assert [c["collective"] for c in slow.calls] == ["allgather", "allreduce"]


def test_shutdown_stops_a_running_solve(qtbot):
    worker = SolveWorker(solve_fn=FakeSolver(10.0))
    worker.start(ring4())
    qtbot.wait(50)
    assert worker.shutdown(2000)


def test_one_line_messages():
    assert one_line(TopologyError("bad\nsecond")) == "bad"
    assert one_line(SolverError("")) == "SolverError"
    assert one_line(KeyError("gpu9")) == "internal error: KeyError: 'gpu9'"
    assert one_line(ValueError()) == "internal error: ValueError"


def test_jit_warmup_solves_a_tiny_valid_fabric(qtbot):
    validate(warmup_topology())
    fake = FakeSolver(0.0)
    warm = JitWarmup(solve_fn=fake)
    with qtbot.waitSignal(warm.done, timeout=5000) as blocker:
        warm.start()
    assert blocker.args[0] >= 0
    assert warm.join(1)
    assert {c["collective"] for c in fake.calls} == {"allgather", "reduce-scatter"}
    assert any(c["max_trees_per_root"] == 1 for c in fake.calls)
    assert all(n != threading.main_thread().name for n in fake.thread_names)


def test_jit_warmup_reports_failure(qtbot):
    warm = JitWarmup(solve_fn=failing_solver("no"))
    with qtbot.waitSignal(warm.failed, timeout=5000) as blocker:
        warm.start()
    assert blocker.args == ["no"]


def test_jit_warmup_with_the_real_solver(qtbot):
    warm = JitWarmup()
    with qtbot.waitSignal(warm.done, timeout=55000):
        warm.start()
    assert warm.error is None


# ---------------------------------------------------------------------- panel
def test_panel_emits_options_and_tracks_state(qtbot):
    panel = SolvePanel()
    qtbot.addWidget(panel)
    assert panel.max_trees_per_root is None
    assert panel.trees_box.text().startswith("∞")
    with qtbot.waitSignal(panel.solve_requested) as blocker:
        panel.solve_button.click()
    assert blocker.args == ["allgather", None]
    panel.set_collective("allreduce")
    panel.set_max_trees_per_root(2)
    with qtbot.waitSignal(panel.solve_requested) as blocker:
        panel.solve_button.click()
    assert blocker.args == ["allreduce", 2]
    with pytest.raises(ValueError):
        panel.set_collective("alltoall")

    panel.set_running(True)
    assert not panel.solve_button.isEnabled() and panel.cancel_button.isEnabled()
    with qtbot.waitSignal(panel.cancel_requested):
        panel.cancel_button.click()
    panel.set_progress("switch_removal", 0.5)
    assert panel.progress_bar.value() == 375  # phase 2 of 4, half done
    assert panel.phase_label.text() == "removing switches (step 2/4) — 50%"
    panel.set_progress("something else", 0.25)
    assert panel.progress_bar.value() == 250
    panel.set_running(False)
    assert panel.solve_button.isEnabled()

    assert not panel.stale
    panel.set_stale(True)
    assert panel.stale and "stale" in panel.stale_label.text().lower()
    panel.set_stale(False)
    assert not panel.stale

    panel.auto_box.setChecked(True)
    assert panel.auto_resolve
    panel.set_auto_resolve_allowed(False, "too big")
    assert not panel.auto_resolve


def test_real_solver_reports_phases_and_cancels(qtbot):
    import time

    from solver.io.templates import mi250

    worker = SolveWorker()
    phases = []
    worker.progress.connect(lambda p, f: phases.append(p))
    with qtbot.waitSignal(worker.finished, timeout=60000):
        worker.start(mi250(1))
    assert "optimum" in phases and "paths" in phases
    assert worker.wait(2000)
    # a bigger fabric, cancelled shortly after it starts
    worker.start(mi250(8))
    qtbot.wait(300)
    t0 = time.monotonic()
    with qtbot.waitSignal(worker.cancelled, timeout=10000):
        worker.cancel()
    assert time.monotonic() - t0 < 5.0  # solver contract: < 0.5 s; generous on a loaded machine
    assert worker.wait(5000)
