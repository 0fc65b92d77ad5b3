"""Message sizes of a sweep: ``1M``, ``2GB`` (binary units); ``1K:4G[:FACTOR]`` or ``1M,1G``."""

from __future__ import annotations

import re
from fractions import Fraction

from solver.model.errors import ForestCollError

DEFAULT_SIZES = "1K:4G"


MAX_SIZE = 1 << 48  # bytes per message (256 TiB): far beyond any run, far below int64


MAX_SIZES = 1000  # sizes in one sweep


_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str | int) -> int:
    """Bytes from ``512``, ``1K``, ``4M``, ``1G``, ``1KiB``, ``2GB`` (binary units)."""
    if isinstance(text, int):
        size = text
    else:
        m = re.fullmatch(
            r"\s*(\d{1,20}(?:\.\d{1,20})?)\s*([KMGT]?)(?:i?B)?\s*", str(text)[:80], re.IGNORECASE
        )
        if not m or len(str(text)) > 80:
            raise ForestCollError(f"bad size {str(text)[:40]!r} (use e.g. 512, 64K, 1M, 4G)")
        size = int(Fraction(m.group(1)) * _UNITS[m.group(2).upper()])
    if size <= 0:
        raise ForestCollError(f"size must be > 0 bytes, got {str(text)[:40]!r}")
    if size > MAX_SIZE:
        raise ForestCollError(f"size {str(text)[:40]!r} is larger than the 256 TiB limit")
    return size


def parse_sizes(spec: str) -> list[int]:
    """``MIN:MAX`` (factor 2), ``MIN:MAX:FACTOR`` or a comma list ``1K,1M,1G``."""
    spec = spec.strip()
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) not in (2, 3):
            raise ForestCollError(f"bad size range {spec!r} (use MIN:MAX or MIN:MAX:FACTOR)")
        lo, hi = parse_size(parts[0]), parse_size(parts[1])
        factor = 2
        if len(parts) == 3:
            try:
                factor = int(parts[2]) if len(parts[2]) <= 20 else -1
            except ValueError:
                raise ForestCollError(f"bad factor {parts[2]!r} in {spec!r}") from None
            if factor < 2:
                raise ForestCollError(f"factor must be >= 2 in {spec!r}")
        if hi < lo:
            raise ForestCollError(f"size range {spec!r} ends below its start")
        sizes = []
        s = lo
        while s <= hi:
            sizes.append(s)
            s *= factor
        return sizes
    items = [x for x in spec.split(",") if x.strip()]
    if len(items) > MAX_SIZES:
        raise ForestCollError(f"{len(items)} sizes given; at most {MAX_SIZES}")
    sizes = [parse_size(x) for x in items]
    if not sizes:
        raise ForestCollError("no sizes given")
    return sizes
