"""Real window: a canvas on 2x DGX A100; prints the tooltip state over time after a hover."""
import sys
from PySide6.QtWidgets import QApplication, QToolTip
from PySide6.QtCore import QTimer, QPointF
from PySide6.QtGui import QUndoStack
app = QApplication(sys.argv)
from fc_gui.model.document import TopologyDocument
from fc_gui.views.canvas import FabricCanvas
from solver.io.templates import dgx_a100
c = FabricCanvas(TopologyDocument(dgx_a100(2)), QUndoStack())
c.resize(900, 700); c.move(100, 100); c.show()
def where():
    x, y = c.doc.position("b0.gpu3"); _, y2 = c.doc.position("b0.nic3")
    p = c.mapToGlobal(c.mapFromScene(c.view_box.mapViewToScene(QPointF(x, (y + y2) / 2))))
    print("POS", p.x(), p.y(), flush=True)
QTimer.singleShot(800, where)
def poll():
    print("tip", QToolTip.isVisible(), repr(QToolTip.text()[:30]), flush=True)
t = QTimer(); t.timeout.connect(poll); t.start(250)
QTimer.singleShot(9000, app.quit)
app.exec()
