"""Solving off the GUI thread: :class:`SolveWorker` and the start-up :class:`JitWarmup`.

The solver's heavy loops are numba kernels compiled with ``nogil=True``, so a solve running in a
worker thread leaves the GUI thread free to repaint and answer input. Each solve runs in a fresh
:class:`QThread`; results come back through queued signals, so slots always run in the GUI thread.

Cancelling sets a :class:`threading.Event` that ``solver.solve(cancel=...)`` polls between kernel
calls; the solver then raises :class:`solver.model.errors.Cancelled` and the worker emits ``cancelled``.
A result of a solve that was superseded (a new ``start`` while one runs) is dropped.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal

from solver.model.errors import Cancelled, ForestCollError
from solver.model.topology import COMPUTE, SWITCH, Link, Node, Topology

SolveFn = Callable[..., Any]

#: Worker threads that may still run, with the cancel event of each (None: cannot be told to
#: stop): referenced here so none is garbage-collected while it runs (a QThread destroyed while
#: its thread runs aborts the process), and so quitting can stop them all (:func:`stop_workers`).
_LIVE_THREADS: dict[QThread, threading.Event | None] = {}


def _reap_threads() -> None:
    for t in list(_LIVE_THREADS):
        if t.isFinished():
            _LIVE_THREADS.pop(t, None)


def running_workers() -> int:
    """How many worker threads (solves, simulations, studies) are still running."""
    _reap_threads()
    return sum(1 for t in _LIVE_THREADS if t.isRunning())


def stop_workers(msecs: int = 2000) -> bool:
    """Cancel every worker thread and wait up to ``msecs`` in all; True if none runs any more.

    Called when the designer quits (:func:`fc_gui.app.leave`)."""
    for cancel in _LIVE_THREADS.values():
        if cancel is not None:
            cancel.set()
    deadline = time.monotonic() + msecs / 1000
    for t in list(_LIVE_THREADS):
        t.wait(max(0, int((deadline - time.monotonic()) * 1000)))
    return running_workers() == 0


#: Niceness added to solver threads (Linux: per thread), so the GUI thread wins the CPU when
#: the machine is busy. 0 disables it. Overridable with FORESTCOLL_WORKER_NICE.
WORKER_NICE = int(os.environ.get("FORESTCOLL_WORKER_NICE", "5"))


def lower_thread_priority(nice: int = WORKER_NICE) -> None:
    """Make the calling thread ``nice`` steps nicer (no-op where unsupported)."""
    if nice <= 0 or not hasattr(os, "setpriority"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + nice)
    except (OSError, AttributeError):
        pass


#: Minimum seconds between two progress signals of the same phase (keeps the event queue light).
PROGRESS_INTERVAL = 0.05


def _default_solve(*args, **kwargs):
    import solver

    return solver.solve(*args, **kwargs)


def one_line(exc: BaseException) -> str:
    """A one-line message for ``exc`` (the first line of its text, or its class name)."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else ""
    if isinstance(exc, ForestCollError):
        return line or type(exc).__name__
    return (
        f"internal error: {type(exc).__name__}: {line}"
        if line
        else f"internal error: {type(exc).__name__}"
    )


#: Unexpected (non-ForestColl) errors print their traceback on stderr for bug reports, except in
#: batch runs (``forestcoll gui --solve/--screenshot``), whose promise is one ``error:`` line.
PRINT_TRACEBACKS = True


def _print_exc() -> None:
    """``traceback.print_exc`` unless :data:`PRINT_TRACEBACKS` is off."""
    if PRINT_TRACEBACKS:
        traceback.print_exc()


class _SolveThread(QThread):
    """Runs one solve; signals are emitted from the worker thread (queued to the GUI thread)."""

    progressed = Signal(int, str, float)
    succeeded = Signal(int, object)
    errored = Signal(int, str)
    was_cancelled = Signal(int)

    def __init__(
        self,
        job: int,
        solve_fn: SolveFn,
        kwargs: dict,
        cancel: threading.Event,
        prepare_fn: Callable[[Any], Any] | None = None,
    ):
        super().__init__()
        self.job = job
        self._solve_fn = solve_fn
        self._prepare_fn = prepare_fn
        self.prepared: Any = None
        self._kwargs = kwargs
        self._cancel = cancel
        self._last_phase = None
        self._last_emit = 0.0
        self.solve_s = 0.0  # wall time of the solve call, and of preparing the display data
        self.prepare_s = 0.0

    def _progress(self, phase: str, fraction: float) -> None:
        now = time.monotonic()
        if (
            phase == self._last_phase
            and fraction < 1.0
            and now - self._last_emit < PROGRESS_INTERVAL
        ):
            return
        self._last_phase = phase
        self._last_emit = now
        self.progressed.emit(self.job, str(phase), float(fraction))

    def run(self) -> None:
        lower_thread_priority()
        t0 = time.perf_counter()
        try:
            schedule = self._solve_fn(progress=self._progress, cancel=self._cancel, **self._kwargs)
        except Cancelled:
            self.was_cancelled.emit(self.job)
        except Exception as exc:  # every failure becomes a one-line message, never a crash
            if self._cancel.is_set():
                self.was_cancelled.emit(self.job)
                return
            if not isinstance(exc, ForestCollError):
                _print_exc()
            self.errored.emit(self.job, one_line(exc))
        else:
            t1 = time.perf_counter()
            self.solve_s = t1 - t0
            if self._prepare_fn is not None and not self._cancel.is_set():
                try:  # display data computed here, off the GUI thread
                    self.prepared = self._prepare_fn(schedule)
                except Exception:
                    _print_exc()
                    self.prepared = None
            self.prepare_s = time.perf_counter() - t1
            if self._cancel.is_set():
                self.was_cancelled.emit(self.job)
            else:
                self.succeeded.emit(self.job, schedule)


class SolveWorker(QObject):
    """Runs ``solver.solve`` in a worker thread and reports through signals.

    Signals
    -------
    started()
        A solve was started.
    progress(phase: str, fraction: float)
        Solver progress (throttled to one signal per :data:`PROGRESS_INTERVAL` per phase).
    finished(schedule: solver.Schedule)
        The solve succeeded; also carries the elapsed wall time in ``last_elapsed``.
    failed(message: str)
        The solve failed; ``message`` is one line.
    cancelled()
        The solve was cancelled.

    Parameters
    ----------
    solve_fn
        The function to run (default ``solver.solve``); it is called with ``topology``,
        ``collective``, ``max_trees_per_root``, ``progress`` and ``cancel`` keyword arguments.
    prepare_fn
        Optional ``f(schedule) -> object`` run in the worker thread after a successful solve
        (derived display data); its result is ``last_prepared`` when ``finished`` fires.
    """

    started = Signal()
    progress = Signal(str, float)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(
        self,
        solve_fn: SolveFn | None = None,
        parent: QObject | None = None,
        prepare_fn: Callable[[Any], Any] | None = None,
    ) -> None:
        super().__init__(parent)
        self._solve_fn = solve_fn or _default_solve
        self.prepare_fn = prepare_fn
        self.last_prepared: Any = None
        self._job = 0
        self._thread: _SolveThread | None = None
        self._cancel: threading.Event | None = None
        self._old_threads: list[_SolveThread] = []
        self._t0 = 0.0
        self.last_elapsed: float | None = None
        #: (solve call, display preparation) seconds of the last solve, inside ``last_elapsed``
        self.last_split: tuple[float, float] | None = None
        self.last_request: dict[str, Any] | None = None

    # ------------------------------------------------------------------ control
    def start(
        self,
        topology: Topology,
        collective: str = "allgather",
        max_trees_per_root: int | None = None,
    ) -> None:
        """Start solving ``topology``; a solve already running is cancelled and its result dropped."""
        if self._thread is not None:
            self._cancel_current(silent=True)
        self._job += 1
        self._cancel = threading.Event()
        kwargs = {
            "topology": topology,
            "collective": collective,
            "max_trees_per_root": max_trees_per_root,
        }
        self.last_request = dict(kwargs)
        thread = _SolveThread(self._job, self._solve_fn, kwargs, self._cancel, self.prepare_fn)
        thread.progressed.connect(self._on_progress)
        thread.succeeded.connect(self._on_succeeded)
        thread.errored.connect(self._on_errored)
        thread.was_cancelled.connect(self._on_cancelled)
        thread.finished.connect(self._reap)
        self._thread = thread
        self._t0 = time.perf_counter()
        _LIVE_THREADS[thread] = self._cancel
        self.started.emit()
        thread.start()

    def cancel(self) -> None:
        """Ask the running solve to stop; ``cancelled`` follows when it has."""
        if self.is_running():
            self._cancel_current(silent=False)

    def abandon(self) -> bool:
        """Cancel the running solve and drop its result: no signal follows. True if one ran."""
        if self._thread is None:
            return False
        self._cancel_current(silent=True)
        return True

    def is_running(self) -> bool:
        return self._thread is not None and self._cancel is not None and not self._cancel.is_set()

    def wait(self, msecs: int = 5000) -> bool:
        """Block until every worker thread has ended (for shutdown and tests)."""
        deadline = time.monotonic() + msecs / 1000
        for t in [*self._old_threads, self._thread]:
            if t is None:
                continue
            left = max(0, int((deadline - time.monotonic()) * 1000))
            if not t.wait(left):
                return False
        return True

    def shutdown(self, msecs: int = 3000) -> bool:
        """Cancel whatever runs and wait for the threads to end (call before the app quits)."""
        if self._cancel is not None:
            self._cancel.set()
        return self.wait(msecs)

    # ------------------------------------------------------------------ internals
    def _cancel_current(self, silent: bool) -> None:
        assert self._cancel is not None and self._thread is not None
        self._cancel.set()
        if silent:
            self._old_threads.append(self._thread)
            self._thread = None
            self._job += 1  # results of the old job are ignored

    def _current(self, job: int) -> bool:
        return self._thread is not None and job == self._thread.job

    def _on_progress(self, job: int, phase: str, fraction: float) -> None:
        if self._current(job) and self._cancel is not None and not self._cancel.is_set():
            self.progress.emit(phase, fraction)

    def _on_succeeded(self, job: int, schedule: object) -> None:
        if self._current(job):
            self.last_elapsed = time.perf_counter() - self._t0
            self.last_prepared = self._thread.prepared if self._thread is not None else None
            self.last_split = (
                (self._thread.solve_s, self._thread.prepare_s) if self._thread is not None else None
            )
            self._finish()
            self.finished.emit(schedule)

    def _on_errored(self, job: int, message: str) -> None:
        if self._current(job):
            self._finish()
            self.failed.emit(message)

    def _on_cancelled(self, job: int) -> None:
        if self._current(job):
            self._finish()
            self.cancelled.emit()

    def _finish(self) -> None:
        if self._thread is not None:
            self._old_threads.append(self._thread)
        self._thread = None
        self._cancel = None

    def _reap(self) -> None:
        _reap_threads()
        self._old_threads = [t for t in self._old_threads if t.isRunning()]


# ---------------------------------------------------------------------- other background work
class _TaskThread(QThread):
    succeeded = Signal(int, object)
    errored = Signal(int, str)

    def __init__(self, job: int, fn: Callable[[], Any]) -> None:
        super().__init__()
        self.job = job
        self._fn = fn

    def run(self) -> None:
        lower_thread_priority()
        try:
            result = self._fn()
        except Exception as exc:
            if not isinstance(exc, (ForestCollError, Cancelled)):
                _print_exc()
            self.errored.emit(self.job, one_line(exc))
        else:
            self.succeeded.emit(self.job, result)


class BackgroundTask(QObject):
    """Runs one zero-argument callable at a time in a worker thread (simulations, studies).

    Signals ``done(result)`` and ``failed(message)`` arrive in the GUI thread; so does
    ``progress(text, fraction)``, emitted by :meth:`report` from the worker thread. ``cancel``
    (given to :meth:`start`) is the event the callable polls; :meth:`abandon` sets it and drops the
    task at once (no signal follows), so a new one can start while the old thread winds down.
    """

    done = Signal(object)
    failed = Signal(str)
    progress = Signal(str, float)

    def report(self, text: str, fraction: float) -> None:
        """A ``progress(text, fraction)`` callback for the task's callable (any thread)."""
        self.progress.emit(text, float(fraction))

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread: _TaskThread | None = None
        self._cancel: threading.Event | None = None
        self._job = 0

    def start(self, fn: Callable[[], Any], cancel: threading.Event | None = None) -> None:
        if self.is_running():
            raise RuntimeError("a background task is already running")
        self._job += 1
        thread = _TaskThread(self._job, fn)
        thread.succeeded.connect(self._on_succeeded)
        thread.errored.connect(self._on_errored)
        thread.finished.connect(_reap_threads)
        self._thread, self._cancel = thread, cancel
        _LIVE_THREADS[thread] = cancel
        thread.start()

    def abandon(self) -> bool:
        """Cancel the running task without waiting and drop its outcome; True if one ran."""
        if not self.is_running():
            return False
        if self._cancel is not None:
            self._cancel.set()
        self._job += 1  # its signals are ignored from now on
        self._thread = None
        return True

    def is_running(self) -> bool:
        return self._thread is not None and self._thread.isRunning()

    def wait(self, msecs: int = 5000) -> bool:
        return self._thread is None or self._thread.wait(msecs)

    def stop(self, msecs: int = 3000) -> bool:
        """Set the cancel event and wait up to ``msecs`` for the thread; True if it ended."""
        if self._cancel is not None:
            self._cancel.set()
        return self.wait(msecs)

    def _on_succeeded(self, job: int, result: object) -> None:
        if job == self._job:
            self.done.emit(result)

    def _on_errored(self, job: int, message: str) -> None:
        if job == self._job:
            self.failed.emit(message)


# ---------------------------------------------------------------------- JIT warm-up
def warmup_topology() -> Topology:
    """A tiny fabric that exercises every solver phase (a switch to remove, trees to pack)."""
    gpus = [Node(f"g{i}", COMPUTE, role="gpu") for i in range(3)]
    nodes = (*gpus, Node("sw", SWITCH, role="nvswitch"))
    links = (
        Link("g0", "sw", Fraction(2)),
        Link("g1", "sw", Fraction(2)),
        Link("g2", "sw", Fraction(1)),
        Link("g0", "g1", Fraction(1)),
    )
    return Topology("jit-warmup", nodes, links)


class JitWarmup(QObject):
    """Compiles the solver's numba kernels in the background by solving a tiny fabric.

    It runs in a daemon Python thread (not a QThread): compiling cannot be interrupted, and a
    daemon thread never holds up or crashes the application's exit. Signals are queued to the GUI
    thread. ``done(seconds)`` on success, ``failed(message)`` otherwise.
    """

    done = Signal(float)
    failed = Signal(str)

    def __init__(self, solve_fn: SolveFn | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._solve_fn = solve_fn or _default_solve
        self._thread: threading.Thread | None = None
        self.seconds: float | None = None
        self.error: str | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="forestcoll-jit-warmup", daemon=True)
        self._thread.start()

    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def join(self, timeout: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.is_running()

    def _run(self) -> None:
        lower_thread_priority()
        t0 = time.perf_counter()
        try:
            for collective in ("allgather", "reduce-scatter"):
                self._solve_fn(topology=warmup_topology(), collective=collective)
            self._solve_fn(topology=warmup_topology(), collective="allgather", max_trees_per_root=1)
        except Exception as exc:
            self.error = one_line(exc)
            try:
                self.failed.emit(self.error)
            except RuntimeError:  # the QObject is gone (app closed)
                pass
            return
        self.seconds = time.perf_counter() - t0
        try:
            self.done.emit(self.seconds)
        except RuntimeError:
            pass
