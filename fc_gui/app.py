"""``forestcoll gui [TOPO] [--intra ...] [--solve] [--screenshot PNG]``: start the designer.

The window appears at once on TOPO (any supported format; an NCCL/RCCL dump read with the
command line's dump options) or the built-in 2x DGX A100 fabric. A dump those options do not
import (a skeleton without ``--intra``) opens the import dialog with them and the reason, not an
error (in a batch run, ``--solve``/``--screenshot``/``--figure``, it is one error line, exit 2).
``--solve`` and ``--screenshot`` are carried out by the results controller
(``window.results_controller.batch``). The arguments are declared in ``solver/cli/gui.py``.
"""

from __future__ import annotations

import argparse
import sys


def install_error_hook(window, batch: bool) -> None:
    """Errors escaping a Qt slot become a one-line dialog (the traceback goes to stderr for
    bug reports) instead of passing unnoticed; in batch mode they end the run with exit 2."""
    import traceback

    from PySide6.QtWidgets import QApplication, QMessageBox

    from solver.model.errors import ForestCollError

    def hook(kind, value, tb) -> None:
        if isinstance(value, ForestCollError):
            message = str(value)
        else:
            if not batch:  # a batch run's promise is one error line, exit 2
                traceback.print_exception(kind, value, tb)
            message = f"unexpected {kind.__name__}: {value}"
        if batch:
            print(
                f"error: {message.splitlines()[0] if message else kind.__name__}", file=sys.stderr
            )
            QApplication.exit(2)
            return
        QMessageBox.critical(window, "Error", message.splitlines()[0] if message else kind.__name__)

    sys.excepthook = hook


def import_options(args: argparse.Namespace) -> dict:
    """The dump options of ``args`` (declared by ``fc_gui.cli``) as keywords of the importer
    and of the import dialog."""
    from solver.io.nccl.options import OVERRIDE_CLASSES

    out: dict = {"boxes": args.boxes, "fabric": args.fabric}
    if args.intra is not None:
        out["intra"] = args.intra
    bandwidth = {
        cls: vars(args)[f"{cls}_bw"]
        for cls in OVERRIDE_CLASSES
        if vars(args).get(f"{cls}_bw") is not None
    }
    if bandwidth:
        out["bandwidth"] = bandwidth
    return out


def given_import_options(args: argparse.Namespace) -> list[str]:
    """The dump options given on the command line (``--boxes``, ``--intra``...)."""
    from solver.io.nccl.options import OVERRIDE_CLASSES

    given = ["--boxes"] if args.boxes != 1 else []
    given += ["--fabric"] if args.fabric != "ib" else []
    given += ["--intra"] if args.intra is not None else []
    given += [f"--{cls}-bw" for cls in OVERRIDE_CLASSES if vars(args).get(f"{cls}_bw") is not None]
    return given


def run(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from solver.io.formats import format_for
    from solver.model.errors import ForestCollError

    options = import_options(args)
    try:
        dump = bool(args.topo) and format_for(args.topo) == "nccl-xml"
    except ForestCollError:  # a results file, or an unknown type: read_fabric says which
        dump = False
    given = given_import_options(args)
    if given and not dump:
        where = args.topo or "the built-in fabric"
        print(
            f"error: {given[0]} applies to NCCL/RCCL .xml dumps only, not {where}", file=sys.stderr
        )
        return 2
    headless = (
        sys.platform.startswith("linux")
        and not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
        and not os.environ.get("QT_QPA_PLATFORM")
    )
    if headless:
        if not args.screenshot and not args.figure:
            print(
                "error: no display to open the designer on (DISPLAY is not set); run it in a "
                "desktop session, under xvfb-run, or use --screenshot PNG to render headless",
                file=sys.stderr,
            )
            return 2
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from fc_gui.main_window import MainWindow

    app = QApplication.instance() or QApplication(["forestcoll gui"])
    app.setApplicationName("ForestColl Designer")
    app.setOrganizationName("ForestColl")
    # A clipboard still owning our QMimeData when Qt tears down can crash the exit.
    app.aboutToQuit.connect(lambda: QApplication.clipboard().clear())
    figure = args.figure
    batch = bool(args.solve or args.screenshot or figure)
    ask_import = False  # a dump the options do not import: the import dialog, with them
    open_later = False  # a big file: opened in the background once the window shows
    if args.topo and not batch and not dump:
        from fc_gui.controllers.file_actions import BACKGROUND_OPEN_BYTES
        from fc_gui.controllers.results_file import is_results_file

        try:
            open_later = Path(
                args.topo
            ).stat().st_size >= BACKGROUND_OPEN_BYTES and not is_results_file(args.topo)
        except OSError:
            open_later = False
    if args.topo and not open_later:
        from fc_gui.controllers.file_actions import FileActions
        from fc_gui.controllers.results_file import is_results_file, read_saved_result

        # read before building the window so a bad file in batch mode fails with exit code 2
        # (a results file's saved result too: it is verified, and a dialog would block a batch)
        try:
            topo = FileActions.read_quiet(args.topo, **(options if dump else {}))
            if batch and is_results_file(args.topo):
                read_saved_result(args.topo)
        except Exception as exc:  # noqa: BLE001 - any failure to read is one line / a dialog
            text = (
                str(exc)
                if isinstance(exc, ForestCollError)
                else (f"{args.topo}: cannot read: {type(exc).__name__}: {exc}")
            )
            text = text.splitlines()[0] if text else type(exc).__name__
            if batch:
                print(f"error: {text}", file=sys.stderr)
                return 2
            topo = None
            ask_import = dump and isinstance(exc, ForestCollError) and Path(args.topo).is_file()
            error = None if ask_import else text
        else:
            error = None
    else:
        topo, error = None, None
    window = MainWindow(topo, check_recovery=not batch and not args.no_recovery)
    install_error_hook(window, batch)
    if batch:
        from fc_gui.controllers import background

        background.PRINT_TRACEBACKS = False
    if topo is not None and args.topo:
        window.file_actions.after_open(Path(args.topo))
    window.show()
    if open_later:
        QTimer.singleShot(0, lambda: window.file_actions.open_file(args.topo))
    if error:
        QTimer.singleShot(0, lambda: window.show_error(error))
    if ask_import:
        QTimer.singleShot(0, lambda: window.file_actions.import_path(args.topo, options))
    if batch:
        controller = window.results_controller
        QTimer.singleShot(
            0,
            lambda: controller.batch.run(
                solve=args.solve, screenshot=args.screenshot, figure=figure, width=args.width
            ),
        )
    return leave(int(app.exec()))


#: How long quitting waits for cancelled worker threads to end (ms).
QUIT_WAIT_MS = 2000


def leave(code: int, wait_ms: int = QUIT_WAIT_MS) -> int:
    """After the event loop: cancel and wait for the worker threads, return ``code``.

    A worker that cannot stop in time (inside a computation with no cancel check) must not
    meet Python's and Qt's teardown: a QThread destroyed while its thread runs aborts the
    process ("QThread: Destroyed while thread is still running", exit 134). Then the process
    ends at once with ``code`` (output flushed); files are written atomically, nothing is lost.
    """
    import os

    from fc_gui.controllers.background import running_workers, stop_workers

    if stop_workers(wait_ms):
        return code
    print(
        f"note: {running_workers()} background task(s) still running at exit; not waiting for them",
        file=sys.stderr,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
