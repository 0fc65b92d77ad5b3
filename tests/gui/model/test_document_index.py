"""DocumentIndex (fc_gui/model/document_index.py): rows, positions, lookups by endpoint and
hit-testing geometry, checked on plain solver Nodes and Links without Qt or a canvas."""

import subprocess
import sys
from fractions import Fraction

import numpy as np

from fc_gui.model.document_index import DocumentIndex, typical_spacing
from solver.model.topology import Link, Node


def square_index() -> DocumentIndex:
    """a(0,0) b(100,0) c(100,100) d(0,100) in two groups; links a-b twice, b-c, c-d, d->a."""
    nodes = [
        Node("a", "compute", "gpu", 0.0, 0.0, group="left"),
        Node("b", "compute", "gpu", 100.0, 0.0, group="right"),
        Node("c", "switch", "nvswitch", 100.0, 100.0, group="right"),
        Node("d", "compute", "gpu", None, 100.0, group="left"),  # x None counts as 0
    ]
    bw = Fraction(25)
    links = {
        10: Link("a", "b", bw),
        11: Link("a", "b", bw),
        12: Link("b", "c", bw),
        13: Link("c", "d", bw),
        14: Link("d", "a", bw, directed=True),
    }
    index = DocumentIndex()
    index.load(nodes, links)
    return index


def test_rows_positions_and_link_ends_in_document_order():
    ix = square_index()
    assert ix.ids == ["a", "b", "c", "d"] and ix.row["c"] == 2
    assert ix.positions()["d"] == (0.0, 100.0)
    assert ix.link_uids == [10, 11, 12, 13, 14] and ix.link_row[13] == 3
    assert ix.ends.tolist() == [[0, 1], [0, 1], [1, 2], [2, 3], [3, 0]]
    assert [(g, rows.tolist()) for g, rows in ix.groups] == [("left", [0, 3]), ("right", [1, 2])]
    assert ix.unit == 30.0  # 0.3 x the median link length (100)
    assert ix.spacing == 100.0
    assert ix.link_lengths().tolist() == [100.0] * 5


def test_lookups_by_endpoint():
    ix = square_index()
    assert ix.links_at("a") == [10, 11, 14]
    assert ix.links_at("c") == [12, 13]
    assert ix.links_at("nowhere") == []
    assert ix.links_among(["a", "b"]) == [10, 11]
    assert ix.links_among(["a", "b", "c", "unknown"]) == [10, 11, 12]
    assert ix.links_among(["a"]) == [] and ix.links_among([]) == []


def test_moving_updates_positions_in_place_and_keeps_the_scale():
    ix = square_index()
    rows = ix.move({"c": (150.0, 120.0), "a": (None, 5.0)})
    assert rows.tolist() == [2, 0]
    assert ix.positions()["c"] == (150.0, 120.0) and ix.positions()["a"] == (0.0, 5.0)
    assert ix.unit == 30.0  # rebuilt only by load: a drag does not rescale the frames


def test_parallel_links_are_drawn_apart_and_others_on_the_centre_line():
    ix = square_index()
    a, b = ix.segment_ends()
    assert a.shape == b.shape == (5, 2)
    assert not np.allclose(a[0], a[1])  # the two a-b links side by side
    assert np.allclose((a[0] + a[1]) / 2, ix.pos[0])  # ... around the a-b line
    assert np.allclose(a[2], ix.pos[1]) and np.allclose(b[2], ix.pos[2])  # b-c alone


def test_node_hit_testing_in_pixels():
    ix = square_index()
    radii = np.full(4, 6.0)
    pixel = (2.0, 2.0)  # 2 data units per pixel: a node is hit within (6 + 4) px = 20 units
    assert ix.node_at(118.0, 100.0, pixel, radii) == "c"
    assert ix.node_at(121.0, 100.0, pixel, radii) is None
    assert ix.node_at(121.0, 100.0, pixel, radii, tolerance_px=5.0) == "c"
    assert ix.node_at(50.0, 50.0, pixel, radii) is None
    empty = DocumentIndex()
    assert empty.node_at(0.0, 0.0, pixel, np.zeros(0)) is None


def test_link_hit_testing_picks_the_drawn_line():
    ix = square_index()
    pixel = (1.0, 1.0)
    assert ix.link_at(100.0, 50.0, pixel) == 12  # on b-c
    assert ix.link_at(104.0, 50.0, pixel) == 12  # within 5 px
    assert ix.link_at(106.0, 50.0, pixel) is None
    a, b = ix.segment_ends()
    mid0, mid1 = (a[0] + b[0]) / 2, (a[1] + b[1]) / 2
    assert ix.link_at(*mid0, pixel) == 10 and ix.link_at(*mid1, pixel) == 11
    assert DocumentIndex().link_at(0.0, 0.0, pixel) is None


def test_rectangles_and_group_frames():
    ix = square_index()
    assert ix.nodes_in_rect(-1, -1, 101, 1) == ["a", "b"]
    assert ix.nodes_in_rect(101, 1, -1, -1) == ["a", "b"]  # corners in any order
    assert ix.nodes_in_rect(100, 100, 100, 100) == ["c"]  # edges included
    boxes = dict(ix.group_boxes(pad=10.0))
    assert boxes == {"left": (-10.0, -10.0, 20.0, 120.0), "right": (90.0, -10.0, 20.0, 120.0)}
    lo, hi = ix.bounds()
    assert lo.tolist() == [0.0, 0.0] and hi.tolist() == [100.0, 100.0]


def test_an_empty_document_and_a_lone_node():
    ix = DocumentIndex()
    ix.load([], {})
    assert ix.ids == [] and ix.pos.shape == (0, 2) and ix.ends.shape == (0, 2)
    a, b = ix.segment_ends()
    assert a.shape == b.shape == (0, 2)
    assert ix.unit == 1.0 and ix.spacing == 1.0 and ix.nodes_in_rect(-9, -9, 9, 9) == []
    ix.load([Node("x", "compute", "gpu", 3.0, 4.0)], {})
    assert ix.spacing == 1.0 == ix.unit  # one node: the fallback
    assert typical_spacing(np.array([[0.0, 0.0], [0.0, 0.0], [3.0, 4.0]]), 7.0) == 5.0


PROBE = """
import sys
for name in ('PySide6', 'shiboken6', 'pyqtgraph'):
    sys.modules[name] = None  # importing any of them now raises ImportError
from solver.model.topology import Link, Node
from fc_gui.model.document_index import DocumentIndex
ix = DocumentIndex()
ix.load([Node('a', 'compute', 'gpu', 0.0, 0.0), Node('b', 'switch', 'nic', 10.0, 0.0)],
        {7: Link('a', 'b', 1)})
print(ix.link_at(5.0, 0.5, (1.0, 1.0)), ix.links_at('b'))
"""


def test_the_index_needs_no_qt():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-800:]
    assert out.stdout.split() == ["7", "[7]"]
