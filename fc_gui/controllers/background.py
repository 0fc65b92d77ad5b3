"""Work off the GUI thread: :class:`BackgroundTask`, the designer's one worker type.

Solves, the JIT warm-up, simulations, studies, file reads and the lecture's comparison all run
as a :class:`BackgroundTask`. The solver's heavy loops are numba kernels compiled with
``nogil=True``, so work in a worker thread leaves the GUI thread free to repaint and answer
input. Each run gets a fresh thread; its outcome comes back through queued signals, so slots
always run in the GUI thread.

The callable of a run is called as ``fn(progress=..., cancel=...)``: ``progress(text,
fraction)`` may be called from the worker thread as often as it likes (signals are throttled),
and ``cancel`` is a :class:`threading.Event` it polls (``solver.solve`` does between kernel
calls, and raises :class:`solver.model.errors.Cancelled`). :meth:`BackgroundTask.cancel` asks
the run to stop and ``cancelled`` follows; :meth:`BackgroundTask.abandon` (and a new
:meth:`BackgroundTask.start`) drops the run at once: no signal of it follows, its thread winds
down on its own.

Worker threads are lowered in priority (:func:`lower_thread_priority`), kept referenced while
they run, and cancelled on quit (:func:`stop_workers`, called by :func:`fc_gui.app.leave`).
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal

from solver.model.errors import Cancelled, ForestCollError

#: ``fn(progress=..., cancel=...)`` run by a task.
TaskFn = Callable[..., Any]

#: Worker threads that may still run, with the cancel event of each: referenced here so none is
#: garbage-collected while it runs (a QThread destroyed while its thread runs aborts the
#: process), and so quitting can stop them all (:func:`stop_workers`).
_LIVE_THREADS: dict[QThread, threading.Event] = {}


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
        cancel.set()
    deadline = time.monotonic() + msecs / 1000
    for t in list(_LIVE_THREADS):
        t.wait(max(0, int((deadline - time.monotonic()) * 1000)))
    return running_workers() == 0


#: Niceness added to worker threads (Linux: per thread), so the GUI thread wins the CPU when
#: the machine is busy. 0 disables it. Overridable with FORESTCOLL_WORKER_NICE.
WORKER_NICE = int(os.environ.get("FORESTCOLL_WORKER_NICE", "5"))


def lower_thread_priority(nice: int | None = None) -> None:
    """Make the calling thread ``nice`` (default :data:`WORKER_NICE`) steps nicer (no-op
    where unsupported)."""
    nice = WORKER_NICE if nice is None else nice
    if nice <= 0 or not hasattr(os, "setpriority"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + nice)
    except (OSError, AttributeError):
        pass


#: Minimum seconds between two progress signals of the same text (keeps the event queue light).
PROGRESS_INTERVAL = 0.05


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


def print_traceback() -> None:
    """``traceback.print_exc`` unless :data:`PRINT_TRACEBACKS` is off."""
    if PRINT_TRACEBACKS:
        traceback.print_exc()


class _Run:
    """One run of a task's callable, executed in the worker thread; its reports go to
    ``emit(job, kind, payload)`` (a queued signal of the task)."""

    def __init__(self, job: int, fn: TaskFn, cancel: threading.Event, emit) -> None:
        self.job = job
        self.fn = fn
        self.cancel = cancel
        self.emit = emit
        self._last_text: str | None = None
        self._last_emit = 0.0

    def progress(self, text: str, fraction: float) -> None:
        """Throttled: one signal per :data:`PROGRESS_INTERVAL` per text, and every 100 %."""
        now = time.monotonic()
        if text == self._last_text and fraction < 1.0 and now - self._last_emit < PROGRESS_INTERVAL:
            return
        self._last_text, self._last_emit = text, now
        self.emit(self.job, "progress", (str(text), float(fraction)))

    def __call__(self) -> None:
        lower_thread_priority()
        try:
            result = self.fn(progress=self.progress, cancel=self.cancel)
        except Cancelled:
            self.emit(self.job, "cancelled", None)
        except Exception as exc:  # every failure becomes a one-line message, never a crash
            if self.cancel.is_set():
                self.emit(self.job, "cancelled", None)
                return
            if not isinstance(exc, ForestCollError):
                print_traceback()
            self.emit(self.job, "failed", one_line(exc))
        else:
            self.emit(self.job, "cancelled" if self.cancel.is_set() else "done", result)


class _WorkerThread(QThread):
    def __init__(self, run: _Run) -> None:
        super().__init__()
        self._run = run

    def run(self) -> None:
        self._run()


class BackgroundTask(QObject):
    """Runs one callable at a time in a worker thread, with progress and cancel.

    Every signal arrives in the GUI thread; none comes from a run that was abandoned or
    superseded by a new :meth:`start`.

    Signals
    -------
    started()
        A run was started.
    progress(text: str, fraction: float)
        The callable's ``progress(text, fraction)``, throttled to one signal per
        :data:`PROGRESS_INTERVAL` per text; none once cancelling.
    done(result: object)
        The callable returned ``result`` (``elapsed``: seconds from start to here).
    failed(message: str)
        The callable raised; ``message`` is one line (:func:`one_line`).
    cancelled()
        The run stopped after :meth:`cancel` (or :meth:`stop`).

    Parameters
    ----------
    parent
        The owning QObject.
    daemon
        Run in a daemon Python thread instead of a QThread: for work that cannot be interrupted
        (compiling the solver's kernels), which then never holds up or crashes the exit; such
        runs are not counted by :func:`running_workers`.
    """

    started = Signal()
    progress = Signal(str, float)
    done = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    _reported = Signal(int, str, object)  # (job, kind, payload) from the worker thread

    def __init__(self, parent: QObject | None = None, daemon: bool = False) -> None:
        super().__init__(parent)
        self.daemon = daemon
        self._job = 0
        self._cancel: threading.Event | None = None  # of the current run; None: none runs
        self._threads: list[Any] = []  # QThreads or threading.Threads this task started
        self._t0 = 0.0
        #: seconds from :meth:`start` to ``done`` of the last run that succeeded
        self.elapsed: float | None = None
        self._reported.connect(self._on_reported)

    # ------------------------------------------------------------------ control
    def start(self, fn: TaskFn) -> None:
        """Run ``fn(progress=..., cancel=...)`` in a new thread; a run under way is abandoned."""
        self.abandon()
        self._job += 1
        cancel = self._cancel = threading.Event()
        run = _Run(self._job, fn, cancel, self._emit)
        self._t0 = time.perf_counter()
        if self.daemon:
            thread: Any = threading.Thread(target=run, name="forestcoll-task", daemon=True)
        else:
            thread = _WorkerThread(run)
            thread.finished.connect(self._reap)
            _LIVE_THREADS[thread] = cancel
        self._threads.append(thread)
        self.started.emit()
        thread.start()

    def cancel(self) -> bool:
        """Ask the run to stop; ``cancelled`` follows when it has. True if one was running."""
        if not self.is_running():
            return False
        assert self._cancel is not None
        self._cancel.set()
        return True

    def abandon(self) -> bool:
        """Ask the run to stop and drop it at once: no signal of it follows. True if one ran."""
        if self._cancel is None:
            return False
        self._cancel.set()
        self._cancel = None
        self._job += 1  # its reports are ignored from now on
        return True

    def is_running(self) -> bool:
        """A run was started, has not been cancelled, and its outcome has not arrived yet."""
        return self._cancel is not None and not self._cancel.is_set()

    def wait(self, msecs: int = 5000) -> bool:
        """Block until every thread this task started has ended; False after ``msecs``."""
        deadline = time.monotonic() + msecs / 1000
        for t in self._threads:
            left = max(0.0, deadline - time.monotonic())
            if isinstance(t, threading.Thread):
                t.join(left)
                if t.is_alive():
                    return False
            elif not t.wait(int(left * 1000)):
                return False
        return True

    def stop(self, msecs: int = 3000) -> bool:
        """Cancel the run and wait up to ``msecs`` for the threads; True if they ended."""
        if self._cancel is not None:
            self._cancel.set()
        return self.wait(msecs)

    # ------------------------------------------------------------------ internals
    def _emit(self, job: int, kind: str, payload: object) -> None:
        """From the worker thread: queue a report to the GUI thread."""
        try:
            self._reported.emit(job, kind, payload)
        except RuntimeError:  # the task is gone (a daemon run outliving the window)
            pass

    def _on_reported(self, job: int, kind: str, payload: Any) -> None:
        if job != self._job or self._cancel is None:
            return  # abandoned or superseded
        if kind == "progress":
            if not self._cancel.is_set():
                self.progress.emit(*payload)
            return
        self._cancel = None
        if kind == "done":
            self.elapsed = time.perf_counter() - self._t0
            self.done.emit(payload)
        elif kind == "failed":
            self.failed.emit(payload)
        else:
            self.cancelled.emit()

    def _reap(self) -> None:
        _reap_threads()
        self._threads = [
            t
            for t in self._threads
            if (t.is_alive() if isinstance(t, threading.Thread) else t.isRunning())
        ]
