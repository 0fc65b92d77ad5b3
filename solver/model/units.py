"""Message sizes in bytes, written the way the CLI reads them (binary units: ``1K`` = 1024).

One formatter for every place that shows a size: ``forestcoll simulate`` tables, ``forestcoll
show`` summaries and the GUI's message-size axis; :func:`format_rate` does the same for bandwidths
(the plot's hover read-outs).
"""

from __future__ import annotations

import math

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


#: Decimal rate units, largest first: (suffix, GB/s per unit). Bandwidths are GB/s = 1e9 B/s,
#: as nccl-tests and ``forestcoll simulate`` print them.
RATE_UNITS = (("TB/s", 1e3), ("GB/s", 1.0), ("MB/s", 1e-3), ("KB/s", 1e-6))


def format_rate(gbps: float, digits: int = 4) -> str:
    """A bandwidth given in GB/s, in the unit that keeps it >= 1, ``digits`` significant digits.

    ``266.667 -> '266.7 GB/s'``, ``0.0512 -> '51.2 MB/s'``, ``1500 -> '1.5 TB/s'``, NaN -> ``'–'``.
    """
    gbps = float(gbps)
    if math.isnan(gbps):
        return "–"
    for suffix, scale in RATE_UNITS:
        if abs(gbps) >= scale:
            return f"{gbps / scale:.{digits}g} {suffix}"
    return f"{gbps / RATE_UNITS[-1][1]:.{digits}g} {RATE_UNITS[-1][0]}"
