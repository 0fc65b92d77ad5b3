"""The resilience map: canvas links coloured by a study's impact, with a colour bar and hover text.

Failures: each link's colour is the drop of the optimum when that link fails (0 % green ... 100 %
dark red: the fabric falls apart). Upgrades: the gain when that link (or its class) is upgraded.
Both directions of a link get its colour; links the study did not touch keep the normal colour.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg

from fc_gui.views.overlay_widgets import ColorBarWidget
from fc_gui.views.overlays import OverlayHost

BINS = 20


def impact_colormap() -> pg.ColorMap:
    """0: no impact (green) ... 1: the most (dark red)."""
    return pg.ColorMap(
        [0.0, 0.2, 0.5, 1.0], [(67, 160, 71), (253, 216, 53), (245, 124, 0), (183, 28, 28)]
    )


class ResilienceOverlay:
    """Link colours, colour bar and tips for the rows of one failure or upgrade study."""

    def __init__(self, canvas: OverlayHost) -> None:
        self.canvas = canvas
        self.cmap = impact_colormap()
        levels = self.cmap.map(np.arange(BINS + 1) / BINS, mode="byte")
        self._lut = [(int(c[0]), int(c[1]), int(c[2]), 255) for c in levels]
        self.study = ""
        self.by_pair: dict[tuple[str, str], Mapping[str, Any]] = {}
        self.by_node: dict[str, Mapping[str, Any]] = {}
        self.colors: dict[tuple[str, str], tuple[int, int, int, int]] = {}
        self.visible = True
        self.scale = 100.0  # percent at the top of the bar
        self.bar: ColorBarWidget | None = None

    @property
    def active(self) -> bool:
        return bool(self.colors)

    def color_of(self, fraction: float) -> tuple[int, int, int, int]:
        if math.isnan(fraction):
            return (150, 150, 150, 160)
        return self._lut[min(BINS, max(0, int(round(fraction * BINS))))]

    def impact(self, row: Mapping[str, Any]) -> float:
        """0..1: the drop (failures) or the gain relative to the best upgrade (upgrades)."""
        pct = row.get("change_pct", math.nan)
        if pct is None or math.isnan(pct):
            return math.nan
        if self.study == "failures":
            return min(1.0, max(0.0, -pct / 100.0))
        return min(1.0, max(0.0, pct / self.scale)) if self.scale > 0 else 0.0

    def show_rows(
        self,
        study: str,
        rows: Sequence[Mapping[str, Any]],
        links: Mapping[str, Sequence[tuple[str, str]]] | None = None,
    ) -> None:
        """Colour the links of ``rows`` (keys "SRC--TGT", optionally "#n"); nodes get tips.

        ``links`` are the (source, target) pairs of class rows' links (upgrade by class): the
        controller resolves them, since a class names roles, not nodes.
        """
        self.clear()
        if study not in ("failures", "upgrade"):
            return
        self.study = study
        gains = [
            r["change_pct"]
            for r in rows
            if r.get("change_pct") is not None and not math.isnan(r["change_pct"])
        ]
        self.scale = (max(gains, default=0.0) or 100.0) if study == "upgrade" else 100.0
        for row in rows:
            key = row["element"]
            if row.get("kind") in ("link", "class"):
                pairs = list((links or {}).get(key, ()))
                if not pairs and "--" in key and row.get("kind") == "link":
                    u, v = key.split("#", 1)[0].split("--", 1)
                    pairs = [(u, v)]
                for u, v in pairs:
                    self.by_pair[(u, v)] = self.by_pair[(v, u)] = row
                    color = self.color_of(self.impact(row))
                    worse = self.colors.get((u, v))
                    if worse is None or self._rank(color) > self._rank(worse):
                        self.colors[(u, v)] = self.colors[(v, u)] = color
            else:
                self.by_node[key] = row
        self._apply()
        self._sync_bar()

    def _rank(self, color) -> int:
        return self._lut.index(color) if color in self._lut else -1

    def attach_color_bar(self) -> ColorBarWidget:
        if self.bar is None:
            # sized for the longer of the two titles
            self.bar = ColorBarWidget(
                self.cmap,
                "optimum gain if upgraded",
                self.canvas.overlay_parent(),
                label=self._bar_label,
            )
        self._sync_bar()
        return self.bar

    def _bar_label(self, t: float) -> str:
        if self.study == "upgrade":
            return (f"+{t * self.scale:.3g}%" if t else "0%") + (" (best)" if t == 1.0 else "")
        return (f"-{int(100 * t)}%" if t else "0%") + (" (cut off)" if t == 1.0 else "")

    def _sync_bar(self) -> None:
        if self.bar is not None:
            self.bar.title = (
                "optimum drop if it fails"
                if self.study != "upgrade"
                else "optimum gain if upgraded"
            )
            self.bar.setVisible(self.visible and self.active)
            self.bar.update()

    def _apply(self) -> None:
        self.canvas.set_link_colors(self.colors if (self.visible and self.colors) else None)

    def set_visible(self, visible: bool) -> None:
        self.visible = visible
        if self.colors:
            self._apply()
        self._sync_bar()

    def clear(self) -> None:
        had = bool(self.colors)
        self.by_pair, self.by_node, self.colors, self.study = {}, {}, {}, ""
        if had:
            self.canvas.set_link_colors(None)
        self._sync_bar()

    # ------------------------------------------------------------------ hover
    def tooltip_for(self, node: str | None, pair: tuple[str, str] | None) -> str | None:
        row = (
            self.by_node.get(node) if node is not None else self.by_pair.get(pair) if pair else None
        )
        if row is None:
            return None
        return describe(self.study, row)


def describe(study: str, row: Mapping[str, Any]) -> str:
    """Hover text of one study row."""
    lines = [f"{row['kind']} {row['element']}"]
    pct = row.get("change_pct")
    change = "" if pct is None or math.isnan(pct) else f" ({pct:+.2f}%)"
    if study == "failures":
        lines.append(f"if it fails: optimum {row['algbw']:.6g} GB/s{change}")
        if not row.get("connected", True):
            lines.append("compute nodes get disconnected")
    else:
        lines.append(f"upgraded: optimum {row['algbw']:.6g} GB/s{change}")
        if row.get("blocked"):
            lines.append("blocked: another cut binds right behind the bottleneck")
    cut = row.get("cut_links") or []
    if cut and row.get("connected", True):
        shown = ", ".join(cut[:4]) + (f" and {len(cut) - 4} more" if len(cut) > 4 else "")
        lines.append(f"bottleneck then: {shown}")
    if row.get("orbit") and row["orbit"] != row["element"]:
        lines.append(f"same result as {row['orbit']} (swapped boxes)")
    return "\n".join(lines)
