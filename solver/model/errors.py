"""Exceptions raised by the solver package.

Every error a user can cause carries a one-line message that names the problem and where it is
(file, line/column, node or link id). The CLI prints ``error: <message>`` and exits with code 2.
"""


class ForestCollError(Exception):
    """Base class of every error the product reports to a user (one-line message)."""


class TopologyError(ForestCollError, ValueError):
    """A fabric description is malformed or unusable (bad file, bad value, disconnected...)."""


class SolverError(ForestCollError):
    """The solver cannot produce a schedule for a valid fabric (names the reason)."""


class Cancelled(ForestCollError):
    """Long work was cancelled by the caller (``cancel`` flag set)."""
