"""ForestColl Designer's desktop app (PySide6 + pyqtgraph). The only package that imports Qt."""

from __future__ import annotations


def _pin_bools_if_emit_leaks() -> bool:
    """Work around a PySide6 6.12 refcount bug: ``SignalInstance.emit()`` returns ``True``
    without a new reference, so every emit from Python (ours and pyqtgraph's) drops one
    reference to ``True``; after enough emits CPython aborts ("bool_dealloc: deallocating True
    or False"). If a probe shows the leak, give True/False a huge reference count (2**40) so
    it can never reach zero. Returns True when the workaround was applied.
    """
    import ctypes
    import sys

    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        ping = Signal()

    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(8):
        probe.ping.emit()
    leaked = before - sys.getrefcount(True) >= 8
    if leaked and sys.implementation.name == "cpython" and sys.version_info < (3, 12):
        for obj in (True, False):  # ob_refcnt is the first field of every CPython object
            ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 40
    return leaked


EMIT_LEAK_WORKAROUND = _pin_bools_if_emit_leaks()
