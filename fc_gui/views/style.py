"""How node roles and links look on the canvas: one place for shapes, colours and sizes.

Roles are free text in the file format; the known ones get a distinct shape and colour, anything
else falls back on its kind (compute = blue circle, switch = grey square).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from solver.model.topology import COMPUTE


@dataclass(frozen=True)
class RoleStyle:
    symbol: str  # pyqtgraph symbol name
    color: tuple[int, int, int]
    size: float  # pixels
    label: str


_COMPUTE_ROLES = {
    "gpu": RoleStyle("o", (46, 125, 50), 14, "GPU"),
    "gcd": RoleStyle("o", (198, 40, 40), 14, "GCD"),
    "npu": RoleStyle("o", (0, 131, 143), 14, "NPU"),
    "tpu": RoleStyle("o", (0, 131, 143), 14, "TPU"),
    "cpu": RoleStyle("o", (93, 64, 55), 14, "CPU"),
}
_SWITCH_ROLES = {
    "nic": RoleStyle("t1", (245, 124, 0), 12, "NIC"),
    "nvswitch": RoleStyle("h", (106, 27, 154), 22, "NVSwitch"),
    "pcie": RoleStyle("d", (120, 144, 156), 14, "PCIe switch"),
    "ib": RoleStyle("s", (21, 101, 192), 18, "IB switch"),
    "leaf": RoleStyle("s", (2, 136, 209), 17, "leaf switch"),
    "spine": RoleStyle("s", (13, 71, 161), 20, "spine switch"),
    "rail": RoleStyle("s", (57, 73, 171), 18, "rail switch"),
    "xgmi": RoleStyle("h", (173, 20, 87), 20, "xGMI switch"),
    "cpu": RoleStyle("s", (93, 64, 55), 16, "CPU / root complex"),
}
_DEFAULT_COMPUTE = RoleStyle("o", (30, 136, 229), 14, "compute")
_DEFAULT_SWITCH = RoleStyle("s", (97, 97, 97), 16, "switch")

#: Roles offered in the inspector's role box, per kind.
COMPUTE_ROLES = tuple(_COMPUTE_ROLES)
SWITCH_ROLES = tuple(_SWITCH_ROLES)

LINK_COLOR = (90, 100, 120, 200)
DIRECTED_LINK_COLOR = (60, 80, 160, 220)
DISABLED_LINK_COLOR = (229, 57, 53, 220)
DISABLED_NODE_COLOR = (200, 200, 200)
SELECTION_COLOR = (255, 179, 0)
GROUP_FILL = (241, 243, 242)  # opaque (a light tint of the background)
GROUP_EDGE = (190, 201, 206)
BACKGROUND = (252, 252, 250)
LABEL_COLOR = (40, 40, 40)
LINK_LABEL_COLOR = (25, 45, 95)  # the bandwidth labels on links

#: Link widths in pixels: one PlotCurveItem per width class keeps drawing batched.
LINK_WIDTH_CLASSES = (1.0, 1.6, 2.4, 3.4, 4.6, 6.0)


def role_style(kind: str, role: str) -> RoleStyle:
    """The look of a node of ``kind`` with free-text ``role``."""
    key = (role or "").strip().lower()
    table = _COMPUTE_ROLES if kind == COMPUTE else _SWITCH_ROLES
    if key in table:
        return table[key]
    for name, style in table.items():  # "ib-leaf", "nic0" ...
        if key.startswith(name):
            return style
    return _DEFAULT_COMPUTE if kind == COMPUTE else _DEFAULT_SWITCH


_STYLE_CACHE: dict[tuple[str, str], RoleStyle] = {}


def role_style_cached(kind: str, role: str) -> RoleStyle:
    """:func:`role_style`, memoised (thousands of nodes share a few roles)."""
    key = (kind, role)
    st = _STYLE_CACHE.get(key)
    if st is None:
        st = _STYLE_CACHE[key] = role_style(kind, role)
    return st


#: Which labels give way when two would overlap: compute nodes keep theirs, then scale-up and
#: network switches, then CPUs and NICs, then PCIe switches (there are many, and alike).
_HOST_LABEL_RANK = {"cpu": 2, "nic": 2, "pcie": 3, "pci": 3}


def label_rank(kind: str, role: str) -> int:
    """0 (label always kept first) .. 3 (given up first) for a node's label."""
    if kind == COMPUTE:
        return 0
    key = (role or "").strip().lower()
    for name, rank in _HOST_LABEL_RANK.items():
        if key.startswith(name):
            return rank
    return 1


def width_classes(bandwidths: np.ndarray) -> np.ndarray:
    """:func:`width_class` of every bandwidth (log scale between their min and max)."""
    b = np.asarray(bandwidths, dtype=float)
    n = len(LINK_WIDTH_CLASSES)
    if len(b) == 0:
        return np.zeros(0, dtype=np.int64)
    lo, hi = b.min(), b.max()
    if hi <= lo or lo <= 0:
        return np.full(len(b), n // 2, dtype=np.int64)
    t = (np.log(b) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return np.clip(np.rint(t * (n - 1)), 0, n - 1).astype(np.int64)


def width_class(bandwidth: Fraction | float, lo: float, hi: float) -> int:
    """Index into :data:`LINK_WIDTH_CLASSES` for ``bandwidth`` on a log scale from lo to hi."""
    n = len(LINK_WIDTH_CLASSES)
    b = float(bandwidth)
    if hi <= lo or b <= 0:
        return n // 2
    t = (math.log(b) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return max(0, min(n - 1, round(t * (n - 1))))
