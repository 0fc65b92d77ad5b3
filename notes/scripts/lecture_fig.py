"""Headless: enter lecture mode on 2x DGX A100, step to the cut, export figures (for looking)."""
import sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
from PySide6.QtCore import QSettings
app = QApplication(sys.argv)
from fc_gui.main_window import MainWindow
from fc_gui.controllers.lecture import preset_topology
import tempfile
tmp = Path(tempfile.mkdtemp())
settings = QSettings(str(tmp / "s.ini"), QSettings.Format.IniFormat)
w = MainWindow(settings=settings, state_dir=tmp)
w.resize(1366, 768); w.show()
lc = w.lecture_controller
lc.start()
import time
t = time.time()
while len(lc.steps) < 5 and time.time() - t < 120:
    app.processEvents(); time.sleep(0.02)
out = Path(sys.argv[1])
for scale in [float(s) for s in sys.argv[2:]] or [1.0]:
    lc.set_scale(scale)
    lc.go_to(1) if hasattr(lc, "go_to") else lc.next()
    for _ in range(30):
        app.processEvents(); time.sleep(0.02)
    p = lc.export_figure(out.with_name(f"{out.stem}_{int(scale*100)}{out.suffix}"), 1920)
    print(p)
lc.exit()
w.undo_stack.setClean()
w.close()
