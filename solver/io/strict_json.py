"""JSON text as RFC 8259 defines it: what ``--json`` prints and what the project writes as JSON.

Python's :mod:`json` writes ``NaN``, ``Infinity`` and ``-Infinity`` for non-finite floats, which no
strict reader (JavaScript's ``JSON.parse``, ``jq``, Go, Rust's serde) accepts. Here a non-finite float
(a quantity that does not exist, such as the route bound of a run without routes) becomes ``null``,
and anything else :mod:`json` cannot write is an error, never a guess.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import IO, Any

import numpy as np


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (also numpy's) replaced by ``None``, numpy scalars and
    arrays as Python numbers and lists, tuples as lists; mappings and lists are copied."""
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.ndarray):
        return finite(value.tolist())
    if isinstance(value, Mapping):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """:func:`json.dumps` of :func:`finite` ``(value)``, refusing NaN and infinities
    (``allow_nan=False``) so that the text is strict JSON. A document that is already plain JSON
    data (the usual case) is written directly, without the copy."""
    try:
        return json.dumps(value, allow_nan=False, **kwargs)
    except (TypeError, ValueError):
        return json.dumps(finite(value), allow_nan=False, **kwargs)


def dump(value: Any, stream: IO[str], **kwargs: Any) -> None:
    """:func:`dumps` written to ``stream``."""
    stream.write(dumps(value, **kwargs))
