"""Parallel links (several links between the same two nodes) drawn side by side, not on top of
each other.

Each link gets a *slot*: 0 when it is alone between its two nodes; otherwise the k links of one
node pair get slots -(k-1)/2 .. (k-1)/2 (in document order), and a link is drawn shifted
``slot * gap`` sideways. The side is taken from the pair's canonical direction (the smaller node
id first), so links u->v and v->u of one pair land on opposite sides instead of cancelling out.
Pure numpy (no Qt): the canvas and the SVG figure both use it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Distance between neighbouring parallel links, in scene units (neighbouring nodes ~100 apart).
PARALLEL_GAP = 9.0


def parallel_slots(pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    """Signed slot of each link ``(source, target)`` (see the module docstring), as floats.

    The sign already accounts for the link's direction against its pair's canonical direction,
    so ``slot * gap * unit_normal(source -> target)`` puts every link on its own line.
    """
    groups: dict[tuple[str, str], list[int]] = {}
    for i, (s, t) in enumerate(pairs):
        key = (s, t) if s <= t else (t, s)
        groups.setdefault(key, []).append(i)
    slots = np.zeros(len(pairs), dtype=float)
    for members in groups.values():
        k = len(members)
        if k < 2:
            continue
        for j, i in enumerate(members):
            s, t = pairs[i]
            sign = 1.0 if s <= t else -1.0
            slots[i] = sign * (j - (k - 1) / 2)
    return slots


def shift_segments(
    a: np.ndarray, b: np.ndarray, slots: np.ndarray, gap: float = PARALLEL_GAP
) -> tuple[np.ndarray, np.ndarray]:
    """Segments ``a[i] -> b[i]`` (arrays of shape (n, 2)) moved sideways by ``slots[i] * gap``.

    The normal is the left-hand one of a -> b in the coordinates given; segments of zero length
    (or with a zero slot) stay where they are. ``gap`` may be negative (a y-up view of y-down
    positions)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if not len(a) or not np.any(slots):
        return a, b
    d = b - a
    length = np.hypot(d[:, 0], d[:, 1])
    with np.errstate(invalid="ignore", divide="ignore"):
        normal = np.stack([-d[:, 1], d[:, 0]], axis=1) / length[:, None]
    normal[~np.isfinite(normal)] = 0.0
    shift = normal * (np.asarray(slots, dtype=float) * gap)[:, None]
    return a + shift, b + shift


__all__ = ["PARALLEL_GAP", "parallel_slots", "shift_segments"]
