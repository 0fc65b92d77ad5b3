"""fc_gui.model.plot_series and fc_gui.views.plot_svg without Qt: names, CSV, the vector plot."""

import csv
import io
import xml.etree.ElementTree as ET

import numpy as np

from fc_gui.model.plot_series import csv_text, in_switch_note, table_series, unique_name
from fc_gui.views.plot_svg import PlotData, PlotLine, build_plot_svg, legend_columns
from solver.model.results import ResultTable


def table(algorithm, source="simulator", measured=False, **attrs):
    sizes = np.array([1024, 1 << 20, 1 << 30], np.int64)
    y = np.array([1.0, 50.0, 200.0])
    nan = np.full(3, np.nan)
    if measured:
        return ResultTable(
            "allreduce", algorithm, source, sizes, nan, nan.copy(), sizes / y / 1e9, y, attrs=attrs
        )
    return ResultTable(
        "allreduce", algorithm, source, sizes, sizes / y / 1e9, y, nan, nan.copy(), attrs=attrs
    )


def test_names_from_tables():
    assert table_series(table("forestcoll")).name == "ForestColl"
    assert table_series(table("ring1")).name == "one ring"
    picks = ["Tree/LL", "Ring/LL128", "NVLSTree/Simple"]
    lib = table_series(table("nccl", library="rccl", choice=picks))
    assert lib.name == "rccl (NVLS tree)" and lib.notes == tuple(picks)  # the pick at 1G
    assert table_series(table("nccl")).name == "nccl"  # no choices stored: just the library
    assert table_series(table("measured", "nccl-tests", measured=True)).name == (
        "measured allreduce"
    )
    assert table_series(table("rccl-ring", "rccl-tests", measured=True)).name == (
        "measured rccl-ring"
    )
    assert table_series(table("bound", "model")) is None  # model tables are drawn apart
    assert table_series(table("nccl", "nccl-tests", measured=True), simulated_only=True) is None
    assert unique_name("ring", {"ring", "ring 2"}) == "ring 3"
    assert unique_name("tree", {"ring"}) == "tree"
    assert (
        in_switch_note({"a": table("ring"), "b": table("nccl", in_switch_note="NVLS wins")})
        == "NVLS wins"
    )


def test_csv_has_one_row_per_size_and_units_in_the_header():
    a = table_series(table("forestcoll"))
    b = table_series(table("measured", "nccl-tests", measured=True))
    b = type(b)(b.name, b.size_bytes[1:], b.algbw[1:], b.kind)  # no point at 1K
    rows = list(csv.reader(io.StringIO(csv_text([a, b]))))
    assert rows[0] == [
        "size (bytes)",
        "size",
        "ForestColl algbw (GB/s)",
        "measured allreduce algbw (GB/s)",
    ]
    assert rows[1:] == [
        ["1024", "1K", "1", ""],
        ["1048576", "1M", "50", "50"],
        ["1073741824", "1G", "200", "200"],
    ]


def test_plot_svg_is_vector_and_its_legend_stays_beside_the_plot():
    lines = [
        PlotLine(
            f"series {i}",
            [1024, 1 << 20],
            [1.0 + i, 10.0 + i],
            (i, 0, 0),
            symbol="o" if i % 2 else "star",
            dashed=i == 0,
        )
        for i in range(12)
    ]
    data = PlotData(
        (3.0, 9.3),
        (0.0, 30.0),
        [(3.0103, "1K"), (6.0206, "1M")],
        [(0, "0")],
        lines,
        note="NVLS beats the bound",
    )
    root = ET.fromstring(build_plot_svg(data, 900, 300))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.find(f".//{ns}image") is None
    assert len(root.findall(f".//{ns}polyline")) == 12
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "NVLS beats the bound" in texts and "series 11" in texts
    area = root.find(f".//{ns}clipPath/{ns}rect")
    right = float(area.get("x")) + float(area.get("width"))
    legend_x = [float(t.get("x")) for t in root.iter(f"{ns}text") if t.text.startswith("series")]
    assert min(legend_x) > right  # the legend starts right of the plot area
    assert legend_columns(12, 300) == 1 and legend_columns(12, 120) == 2
