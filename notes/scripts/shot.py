"""shot.py OUT.png: the whole X screen ($DISPLAY) as a PNG (Qt's screen grab, xcb)."""
import sys
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
ok = app.primaryScreen().grabWindow(0).save(sys.argv[1], "PNG")
sys.exit(0 if ok else 1)
