"""Pure data: the fabric (:class:`Topology`), a solved :class:`Schedule`, result tables and errors.

No algorithms live here and nothing here imports another solver layer.
"""
