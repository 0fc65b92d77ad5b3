"""Message sizes in bytes, written the way the CLI reads them (binary units: ``1K`` = 1024).

One formatter for every place that shows a size: ``forestcoll simulate`` tables, ``forestcoll
show`` summaries and the GUI's message-size axis.
"""

from __future__ import annotations

#: Binary units, largest first: (suffix, bytes).
BINARY_UNITS = (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10))


def format_size(nbytes: int) -> str:
    """``nbytes`` in the largest binary unit it is a whole multiple of, else the plain count.

    ``1024 -> '1K'``, ``256 << 10 -> '256K'``, ``4 << 30 -> '4G'``, ``1536 -> '1536'``,
    ``512 -> '512'``. The text parses back to the same number with
    :func:`solver.simulate.parse_size`.
    """
    nbytes = int(nbytes)
    for suffix, scale in BINARY_UNITS:
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale}{suffix}"
    return str(nbytes)
