"""The NCCL/RCCL import dialog: boxes, network, the intra-box fabric of a skeleton dump
(``--intra``) and per-class bandwidth overrides (``--nvlink-bw`` ...), as on the command line.

Given the dump's path, the dialog reads it with the options shown: what the importer refuses
(a skeleton dump without ``--intra``, ``--intra`` on a full dump, an MLOPart device...) is said on
one line inside the dialog when it opens, again as the options are typed (:data:`RECHECK_MS`
after the last keystroke, read in a background task: 4096 boxes of a big dump take seconds),
and when OK is pressed; OK stays refused until the options fit the
file -- the user sees this one dialog, never a second error box after it. The fields can start
from the command line's options (``forestcoll gui DUMP --intra ...``).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
)

from fc_gui.views.dialog_titles import keep_title_whole
from solver.io.nccl.options import INTRA_PRESETS, OVERRIDE_CLASSES, parse_intra, parse_overrides
from solver.io.nccl.topo_xml import FABRICS, MAX_BOXES
from solver.model.errors import ForestCollError

FROM_DUMP = "from the dump"
#: Quiet time after the last change of an option before the dump is read again with them (ms).
RECHECK_MS = 250
ERROR_STYLE = "color: rgb(183,28,28);"


def _preset_names() -> str:
    return ", ".join(f"{kind}:{name}" for kind, name in INTRA_PRESETS)


class NcclImportDialog(QDialog):
    """Options of :func:`solver.io.nccl.topo_xml.loads`; :meth:`options` gives them as keywords.

    ``path``: the dump; when given, :meth:`problem` reads it with the options shown.
    ``options``: the fields' first values (keywords of :meth:`options`: ``boxes``, ``fabric``,
    ``intra``, ``bandwidth``). ``task``: a background task (``start(fn)``, ``abandon()``, signals
    ``done``/``failed``; :class:`fc_gui.controllers.background.BackgroundTask`) the re-check as you type runs in;
    without one it runs on the calling thread.
    """

    def __init__(
        self, parent=None, path: str | Path | None = None, options: dict | None = None, task=None
    ) -> None:
        super().__init__(parent)
        self.path = Path(path) if path else None
        name = self.path.name if self.path else ""
        self.setWindowTitle(f"Import NCCL/RCCL topology {name}".strip())
        self.setMinimumWidth(560)
        keep_title_whole(self)
        form = QFormLayout(self)
        self.boxes = QSpinBox()
        self.boxes.setRange(1, MAX_BOXES)
        self.boxes.setToolTip(
            "--boxes: copies of the dump (a dump with several host_hash values is already "
            "several boxes)"
        )
        form.addRow("Boxes (--boxes):", self.boxes)
        self.fabric = QComboBox()
        self.fabric.addItems(list(FABRICS))
        self.fabric.setToolTip(
            "--fabric: ib = one switch for every NIC; rail = one switch per NIC index"
        )
        form.addRow("Network between boxes (--fabric):", self.fabric)
        self.intra = QLineEdit()
        self.intra.setPlaceholderText("from the dump (skeleton: nvswitch:GBPS, mesh:GBPS, none)")
        self.intra.setToolTip(
            "--intra: the GPU-to-GPU fabric of a skeleton dump (PCI devices only); "
            f"named presets: {_preset_names()}"
        )
        form.addRow("Intra-box fabric (--intra):", self.intra)
        self.overrides: dict[str, QDoubleSpinBox] = {}
        for cls, meaning in OVERRIDE_CLASSES.items():
            spin = QDoubleSpinBox()
            spin.setRange(0.0, 1_000_000.0)
            spin.setDecimals(3)
            spin.setSuffix(" GB/s")
            spin.setSpecialValueText(FROM_DUMP)  # 0 = the runtime's own figure
            spin.setToolTip(f"--{cls}-bw: {meaning}")
            self.overrides[cls] = spin
            form.addRow(f"{cls} (--{cls}-bw):", spin)
        self.error = QLabel("")
        self.error.setObjectName("importProblem")
        self.error.setStyleSheet(ERROR_STYLE)
        self.error.setWordWrap(True)
        form.addRow(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        form.addRow(buttons)
        self.set_options(options or {})
        self.recheck_timer = QTimer(self)
        self.recheck_timer.setSingleShot(True)
        self.recheck_timer.setInterval(RECHECK_MS)
        self.recheck_timer.timeout.connect(self.recheck_in_background)
        self.check_task = task
        if task is not None:
            task.setParent(self)
            task.done.connect(self._show_problem)
            task.failed.connect(self._show_problem)
        self.boxes.valueChanged.connect(lambda *_: self.recheck_timer.start())
        self.fabric.currentIndexChanged.connect(lambda *_: self.recheck_timer.start())
        self.intra.textChanged.connect(lambda *_: self.recheck_timer.start())
        for spin in self.overrides.values():
            spin.valueChanged.connect(lambda *_: self.recheck_timer.start())
        problem = self.recheck()
        if problem and "--intra" in problem:
            self.intra.setFocus()

    def set_options(self, options: dict) -> None:
        """Set the fields from keyword options (as :meth:`options` returns them)."""
        self.boxes.setValue(int(options.get("boxes", 1) or 1))
        fabric = options.get("fabric")
        if fabric and self.fabric.findText(str(fabric)) >= 0:
            self.fabric.setCurrentText(str(fabric))
        self.intra.setText(str(options.get("intra") or ""))
        for cls, value in (options.get("bandwidth") or {}).items():
            if cls in self.overrides:
                try:
                    self.overrides[cls].setValue(float(Fraction(str(value))))
                except (ValueError, ZeroDivisionError):
                    pass  # not a number: the field stays "from the dump"

    def recheck(self) -> str | None:
        """Read the dump with the options shown; show what is refused (or nothing)."""
        self.recheck_timer.stop()
        if self.check_task is not None:
            self.check_task.abandon()
        problem = self.problem()
        self._show_problem(problem)
        return problem

    def recheck_in_background(self) -> None:
        """:meth:`recheck` in the background task (the options as they are now)."""
        if self.check_task is None:
            self.recheck()
            return
        self.check_task.abandon()
        try:
            options = self.options()
        except ForestCollError as exc:
            self._show_problem(str(exc))
            return
        self.check_task.start(lambda progress, cancel: self._problem_with(options))

    def _show_problem(self, problem: str | None) -> None:
        self.error.setText(problem or "")
        self.ok_button.setToolTip(problem or "")

    def options(self) -> dict:
        """Keyword options for ``read_fabric``/``load`` (raises TopologyError when invalid)."""
        intra = self.intra.text().strip() or None
        parse_intra(intra)
        bandwidth = {cls: s.value() for cls, s in self.overrides.items() if s.value() > 0}
        parse_overrides(bandwidth)
        out: dict = {"boxes": self.boxes.value(), "fabric": self.fabric.currentText()}
        if intra:
            out["intra"] = intra
        if bandwidth:
            out["bandwidth"] = bandwidth
        return out

    def problem(self) -> str | None:
        """Why the options shown do not import the dump (one line), or None."""
        try:
            options = self.options()
        except ForestCollError as exc:
            return str(exc)
        return self._problem_with(options)

    def _problem_with(self, options: dict) -> str | None:
        """Why ``options`` do not import the dump (one line), or None (any thread)."""
        try:
            if self.path is not None:
                from solver.io.formats import load

                load(self.path, check=False, **options)
        except ForestCollError as exc:
            return str(exc).replace(f"{self.path}: ", "") if self.path else str(exc)
        except OSError as exc:
            return f"{self.path}: {exc.strerror or exc}"
        return None

    def accept(self) -> None:
        if self.recheck():
            return
        super().accept()

    def done(self, result: int) -> None:
        self.recheck_timer.stop()
        if self.check_task is not None:
            self.check_task.abandon()
        super().done(result)


__all__ = ["NcclImportDialog"]
