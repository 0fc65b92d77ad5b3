"""The plots dock's message-size axis: ticks on powers of two, labelled by solver.model.units."""

import math

from fc_gui.views.plots_dock import SizeAxis


def test_log_axis_ticks_on_powers_of_two(qapp):
    axis = SizeAxis("bottom")
    axis.setLogMode(True)
    (major_spacing, major), (minor_spacing, minor) = axis.tickValues(3.0, 9.65, 600)
    assert axis.tickStrings(major, 1.0, major_spacing) == ["1K", "1M", "1G"]
    labels = axis.tickStrings(minor, 1.0, minor_spacing)
    assert labels[:3] == ["4K", "16K", "64K"] and labels[-1] == "4G"
    assert "1M" not in labels and len(labels) == 9  # 2**12..2**32 even powers, minus majors
    assert major_spacing == 10 * math.log10(2)


def test_linear_axis_labels_exact_sizes(qapp):
    axis = SizeAxis("bottom")
    assert axis.tickStrings([512, 2048, 1536], 1.0, 512) == ["512", "2K", "1536"]
