"""ForestColl Designer's desktop app (PySide6 + pyqtgraph). The only package that imports Qt."""

from __future__ import annotations


def _pin_singletons_if_pyside_leaks() -> bool:
    """Work around a PySide6 6.12 refcount bug seen on CPython 3.11.

    Every call of a void Qt method from Python (``painter.drawRect``, ``setObjectName``...)
    drops one reference to ``None``, and ``SignalInstance.emit()`` drops one to ``True``: the
    binding treats them as immortal (as they are from CPython 3.12 on). After enough calls (a
    few seconds of painting) CPython aborts with "none_dealloc: deallocating None". If a probe
    shows the leak, give None/True/False a huge reference count (2**40) so it never reaches
    zero. Returns True when the workaround was applied.
    """
    import ctypes
    import sys

    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return False
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        ping = Signal()

    probe = _Probe()
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(8):
        probe.setObjectName("probe")
        probe.ping.emit()
    leaked = (none_before - sys.getrefcount(None) >= 8) or (
        true_before - sys.getrefcount(True) >= 8
    )
    if leaked:
        for obj in (None, True, False):  # ob_refcnt is the first field of every CPython object
            ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 40
    return leaked


PYSIDE_REFCOUNT_WORKAROUND = _pin_singletons_if_pyside_leaks()
