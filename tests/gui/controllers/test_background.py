"""BackgroundTask (the solve, the JIT warm-up, any callable) and SolvePanel: signals,
progress, cancel, errors, threads."""

from __future__ import annotations

import threading
import time

import pytest
from results_fixtures import FakeSolver, failing_solver, ring4, ring4_schedule

from fc_gui.controllers import background
from fc_gui.controllers.background import BackgroundTask, one_line, running_workers
from fc_gui.controllers.solve_jobs import (
    SolveOutcome,
    default_solve,
    solve_job,
    warmup_job,
    warmup_topology,
)
from fc_gui.views.solve_panel import SolvePanel
from solver.model.errors import Cancelled, SolverError, TopologyError
from solver.model.schedule import Schedule
from solver.model.topology import validate


def start_solve(task, solve_fn, topology, collective="allgather", max_trees_per_root=None):
    request = {
        "topology": topology,
        "collective": collective,
        "max_trees_per_root": max_trees_per_root,
    }
    task.start(solve_job(solve_fn, request, lambda s: {"trees": len(s.trees)}))


def test_a_solve_carries_its_schedule_and_runs_off_the_gui_thread(qtbot):
    fake = FakeSolver(0.1)
    worker = BackgroundTask()
    progress = []
    worker.progress.connect(lambda phase, frac: progress.append((phase, frac)))
    with qtbot.waitSignal(worker.done, timeout=5000) as blocker:
        start_solve(worker, fake, ring4(), "reduce-scatter", 3)
    outcome = blocker.args[0]
    assert isinstance(outcome, SolveOutcome) and isinstance(outcome.schedule, Schedule)
    assert outcome.schedule.optimal_algbw_exact == ring4_schedule().optimal_algbw_exact
    assert outcome.prepared == {"trees": len(outcome.schedule.trees)}
    assert outcome.solve_s >= 0.1 and outcome.prepare_s >= 0
    assert fake.calls[0]["collective"] == "reduce-scatter"
    assert fake.calls[0]["max_trees_per_root"] == 3
    assert fake.thread_names[0] != threading.main_thread().name
    assert progress, "no progress signal"
    assert progress[-1] == ("trees", 1.0)
    assert {p for p, _ in progress} == {"optimum", "trees"}
    assert not worker.is_running()
    assert worker.elapsed is not None and worker.elapsed >= 0.1
    assert worker.wait(2000)


def test_cancel_emits_cancelled_not_done(qtbot):
    worker = BackgroundTask()
    done = []
    worker.done.connect(done.append)
    with qtbot.waitSignal(worker.started, timeout=1000):
        start_solve(worker, FakeSolver(5.0), ring4())
    assert worker.is_running()
    qtbot.wait(100)
    with qtbot.waitSignal(worker.cancelled, timeout=2000):
        assert worker.cancel()
    assert not worker.is_running()
    assert not worker.cancel()  # nothing left to cancel
    assert worker.wait(2000)
    qtbot.wait(50)
    assert done == []


def test_failed_gives_the_one_line_message(qtbot):
    worker = BackgroundTask()
    with qtbot.waitSignal(worker.failed, timeout=3000) as blocker:
        start_solve(worker, failing_solver("switch 'sw0' is unbalanced"), ring4())
    assert blocker.args == ["switch 'sw0' is unbalanced"]
    assert worker.wait(2000)


def test_unexpected_exception_becomes_one_line_internal_error(qtbot, capsys):
    worker = BackgroundTask()
    with qtbot.waitSignal(worker.failed, timeout=3000) as blocker:
        start_solve(worker, FakeSolver(0.01, ZeroDivisionError("division by zero\nmore")), ring4())
    message = blocker.args[0]
    assert message == "internal error: ZeroDivisionError: division by zero"
    assert "\n" not in message
    assert worker.wait(2000)


def test_restart_drops_the_superseded_result(qtbot):
    slow = FakeSolver(1.0)
    worker = BackgroundTask()
    results = []
    worker.done.connect(results.append)
    cancelled = []
    worker.cancelled.connect(lambda: cancelled.append(1))
    start_solve(worker, slow, ring4(), "allgather")
    qtbot.wait(50)
    slow.duration = 0.05
    with qtbot.waitSignal(worker.done, timeout=5000):
        start_solve(worker, slow, ring4(), "allreduce")
    assert worker.wait(3000)
    qtbot.wait(100)
    assert len(results) == 1
    assert cancelled == []  # a superseded solve is silent
    assert [c["collective"] for c in slow.calls] == ["allgather", "allreduce"]


def test_stop_stops_a_running_solve(qtbot):
    worker = BackgroundTask()
    start_solve(worker, FakeSolver(10.0), ring4())
    qtbot.wait(50)
    assert worker.stop(2000)


def test_progress_is_throttled_per_text_and_every_completion_passes(qtbot):
    def chatty(progress, cancel):
        for i in range(2000):  # far more reports than PROGRESS_INTERVAL lets through
            progress("counting", i / 2000)
        progress("counting", 1.0)
        progress("next", 0.5)
        return "ok"

    task = BackgroundTask()
    seen = []
    task.progress.connect(lambda text, f: seen.append((text, f)))
    with qtbot.waitSignal(task.done, timeout=5000) as blocker:
        task.start(chatty)
    qtbot.wait(50)
    assert blocker.args == ["ok"]
    assert seen[0] == ("counting", 0.0)  # the first report of a text passes
    assert ("counting", 1.0) in seen and seen[-1] == ("next", 0.5)
    assert len(seen) < 200, f"{len(seen)} progress signals: not throttled"


def test_no_progress_once_cancelling_and_a_deaf_callable_ends_cancelled(qtbot):
    """The callable ignores ``cancel``: after cancel() its reports and its result are dropped
    and ``cancelled`` arrives, not ``done``."""
    go_on = threading.Event()

    def deaf(progress, cancel):
        progress("before", 0.5)
        go_on.wait(5)
        progress("after", 0.5)
        return "result"

    task = BackgroundTask()
    seen, done = [], []
    task.progress.connect(lambda text, f: seen.append(text))
    task.done.connect(done.append)
    with qtbot.waitSignal(task.progress, timeout=3000):
        task.start(deaf)
    task.cancel()
    with qtbot.waitSignal(task.cancelled, timeout=3000):
        go_on.set()
    qtbot.wait(50)
    assert seen == ["before"] and done == []


def test_cancel_reaches_the_callable_and_a_cancelled_error_is_no_failure(qtbot):
    def polite(progress, cancel):
        while not cancel.wait(0.01):
            pass
        raise Cancelled("stopped")

    task = BackgroundTask()
    failed = []
    task.failed.connect(failed.append)
    task.start(polite)
    qtbot.wait(50)
    assert running_workers() >= 1
    t0 = time.monotonic()
    with qtbot.waitSignal(task.cancelled, timeout=2000):
        task.cancel()
    assert time.monotonic() - t0 < 1.0
    assert task.wait(1000) and failed == []


def test_abandon_drops_the_run_silently(qtbot):
    task = BackgroundTask()
    outcomes = []
    for name in ("done", "failed", "cancelled"):
        getattr(task, name).connect(lambda *a, name=name: outcomes.append(name))
    task.start(lambda progress, cancel: cancel.wait(5) and "late")
    assert task.abandon() and not task.is_running()
    assert not task.abandon()
    assert task.wait(2000)
    qtbot.wait(100)
    assert outcomes == []


def test_worker_threads_run_at_lower_priority(qtbot, monkeypatch):
    import os

    monkeypatch.setattr(background, "WORKER_NICE", 3)
    task = BackgroundTask()
    with qtbot.waitSignal(task.done, timeout=3000) as blocker:
        task.start(
            lambda progress, cancel: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        )
    assert blocker.args[0] >= os.getpriority(os.PRIO_PROCESS, 0) + 1


def test_one_line_messages():
    assert one_line(TopologyError("bad\nsecond")) == "bad"
    assert one_line(SolverError("")) == "SolverError"
    assert one_line(KeyError("gpu9")) == "internal error: KeyError: 'gpu9'"
    assert one_line(ValueError()) == "internal error: ValueError"


def test_jit_warmup_solves_a_tiny_valid_fabric_in_a_daemon_thread(qtbot):
    validate(warmup_topology())
    fake = FakeSolver(0.0)
    warm = BackgroundTask(daemon=True)
    assert background.stop_workers(5000)  # earlier tests' runs wound down: the count is ours
    with qtbot.waitSignal(warm.done, timeout=5000) as blocker:
        warm.start(warmup_job(fake))
        assert running_workers() == 0  # a daemon run does not hold up the exit
    assert blocker.args[0] >= 0
    assert warm.wait(1000)
    assert {c["collective"] for c in fake.calls} == {"allgather", "reduce-scatter"}
    assert any(c["max_trees_per_root"] == 1 for c in fake.calls)
    assert all(n != threading.main_thread().name for n in fake.thread_names)


def test_jit_warmup_reports_failure(qtbot):
    warm = BackgroundTask(daemon=True)
    with qtbot.waitSignal(warm.failed, timeout=5000) as blocker:
        warm.start(warmup_job(failing_solver("no")))
    assert blocker.args == ["no"]


def test_jit_warmup_with_the_real_solver(qtbot):
    warm = BackgroundTask(daemon=True)
    failed = []
    warm.failed.connect(failed.append)
    with qtbot.waitSignal(warm.done, timeout=55000):
        warm.start(warmup_job(default_solve))
    assert failed == []


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

    worker = BackgroundTask()
    phases = []
    worker.progress.connect(lambda p, f: phases.append(p))
    with qtbot.waitSignal(worker.done, timeout=60000):
        start_solve(worker, default_solve, mi250(1))
    assert "optimum" in phases and "paths" in phases
    assert worker.wait(2000)
    # a bigger fabric, cancelled shortly after it starts
    start_solve(worker, default_solve, mi250(8))
    qtbot.wait(300)
    t0 = time.monotonic()
    with qtbot.waitSignal(worker.cancelled, timeout=10000):
        worker.cancel()
    assert time.monotonic() - t0 < 5.0  # solver contract: < 0.5 s; generous on a loaded machine
    assert worker.wait(5000)
