"""``forestcoll gui [TOPO] [--solve] [--screenshot PNG]``: start the designer.

The window appears at once on TOPO (any supported format) or the built-in 2x DGX A100 fabric.
``--solve`` and ``--screenshot`` are carried out by the results controller
(``window.results_controller.run_batch``); without one, ``--screenshot`` still renders the editor.
"""

from __future__ import annotations

import argparse
import sys


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """Add the gui arguments to ``parser`` (a new one if None)."""
    if parser is None:
        parser = argparse.ArgumentParser(prog="forestcoll gui", description=__doc__)
    parser.add_argument(
        "topo",
        nargs="?",
        metavar="TOPO",
        help="fabric file to open (.json v1/node-link, .graphml, NCCL .xml); "
        "default: the built-in 2x DGX A100 fabric",
    )
    parser.add_argument("--solve", action="store_true", help="solve the fabric right after opening")
    parser.add_argument(
        "--screenshot",
        metavar="PNG",
        help="render the window to PNG (after solving with --solve) and exit",
    )
    parser.add_argument(
        "--no-recovery",
        action="store_true",
        help="do not offer autosaved work from a previous crash",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the designer; returns the exit code."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    return run(args)


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
            traceback.print_exception(kind, value, tb)
            message = f"unexpected {kind.__name__}: {value}"
        if batch:
            print(f"error: {message}", file=sys.stderr)
            QApplication.exit(2)
            return
        QMessageBox.critical(window, "Error", message.splitlines()[0] if message else kind.__name__)

    sys.excepthook = hook


def run(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    headless = (
        sys.platform.startswith("linux")
        and not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
        and not os.environ.get("QT_QPA_PLATFORM")
    )
    if headless:
        if not args.screenshot:
            print(
                "error: no display to open the designer on (DISPLAY is not set); run it in a "
                "desktop session, under xvfb-run, or use --screenshot PNG to render headless",
                file=sys.stderr,
            )
            return 2
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from solver.model.errors import ForestCollError

    from .main_window import MainWindow

    app = QApplication.instance() or QApplication(["forestcoll gui"])
    app.setApplicationName("ForestColl Designer")
    app.setOrganizationName("ForestColl")
    # A clipboard still owning our QMimeData when Qt tears down can crash the exit.
    app.aboutToQuit.connect(lambda: QApplication.clipboard().clear())
    batch = bool(args.solve or args.screenshot)
    if args.topo:
        from .file_actions import FileActions

        # read before building the window so a bad file in batch mode fails with exit code 2
        try:
            topo = FileActions.read_quiet(args.topo)
        except ForestCollError as exc:
            if batch:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            topo = None
            error = str(exc)
        else:
            error = None
    else:
        topo, error = None, None
    window = MainWindow(topo, check_recovery=not batch and not args.no_recovery)
    install_error_hook(window, batch)
    if topo is not None and args.topo:
        window.file_actions.after_open(Path(args.topo))
    window.show()
    if error:
        QTimer.singleShot(0, lambda: window.show_error(error))
    if batch:
        controller = window.results_controller
        if controller is not None and hasattr(controller, "run_batch"):
            QTimer.singleShot(
                0, lambda: controller.run_batch(solve=args.solve, screenshot=args.screenshot)
            )
        elif args.solve:
            print("error: solving is not available in this build", file=sys.stderr)
            return 2
        else:

            def shoot() -> None:
                window.canvas.fit_view()
                ok = window.grab().save(str(args.screenshot))
                if not ok:
                    print(f"error: cannot write {args.screenshot}", file=sys.stderr)
                app.exit(0 if ok else 2)

            QTimer.singleShot(300, shoot)
    return int(app.exec())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
