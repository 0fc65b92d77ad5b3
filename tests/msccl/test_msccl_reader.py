"""check-xml reads MSCCL XML as the runtimes' own reader does (solver/msccl/reader.py).

One test per rule: a file an XML library reads fine but RCCL's / msccl-executor's reader
(msccl_parser.cc:18-214) fails on or reads differently is refused by ``forestcoll check-xml`` with
exit 2 and one ``error:`` line naming the rule and the file's line. The good file each case starts
from passes, and what the reader reads the same way (blank lines, a comment whose first word is
plain, trailing attributes past the 16th token that the loader never reads) still passes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from solver.cli import main
from solver.msccl import MscclError, check_xml, parse_xml, to_xml
from solver.msccl.program import Program
from solver.msccl.runtimes import RUNTIMES

REAL = Path(__file__).parents[1] / "data" / "real" / "msccl"

# a 2-rank allgather, one element per line: rule violations are placed on a known line
GOOD = """<algo name="x" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allgather" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="2" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="1" o_chunks="2" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="-1" recv="-1" chan="0">
      <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
"""
STEP = '<step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>'
assert GOOD.count(STEP) == 1 and GOOD.splitlines()[12].strip() == STEP  # line 13


def _line13(new: str) -> str:
    return GOOD.replace(STEP, new)


# (rule, file text, line the error names)
CASES = [
    ("reference", GOOD.replace('ngpus="2"', 'ngpus="&#50;"'), 1),
    ("reference", _line13(STEP.replace('dstbuf="o"', 'dstbuf="&#111;"')), 13),
    ("reference", GOOD.replace('name="x"', 'name="a&amp;b"'), 1),
    ("quote", GOOD.replace('ngpus="2"', "ngpus='2'"), 1),
    ("quote", _line13(STEP.replace('cnt="1"', "cnt='1'")), 13),
    ("newline-in-tag", _line13(STEP.replace(' cnt="1"', '\n        cnt="1"')), 13),
    ("newline-in-tag", _line13(STEP.replace("<step ", "<step\r\n ")), 13),
    ("newline-in-tag", GOOD.replace('</gpu>\n  <gpu id="1"', '</gpu\n>\n  <gpu id="1"'), 10),
    ("equals-space", _line13(STEP.replace('cnt="1"', 'cnt ="1"')), 13),
    ("equals-space", _line13(STEP.replace('cnt="1"', 'cnt= "1"')), 13),
    ("equals-space", _line13(STEP.replace('cnt="1"', 'cnt = "1"')), 13),
    (
        "cdata",
        GOOD.replace("    </tb>\n  </gpu>\n</algo>", "    <![CDATA[ ]]></tb>\n  </gpu>\n</algo>"),
        18,
    ),
    ("text", GOOD.replace("</algo>", "junk\n</algo>"), 20),
    ("text", _line13(STEP + "x"), 13),
    ("text", "\ufeff" + GOOD, 1),  # a byte-order mark: not '<'
    ("text", GOOD.replace("</algo>", "\t</algo>").replace("\t", "\u00a0"), 20),  # no-break space
    ("close-tag", GOOD.replace("</algo>", "</algo >"), 20),
    ("declaration", '<?xml version="1.0" encoding="UTF-8"?>\n' + GOOD, 1),
    ("declaration", GOOD.replace("</algo>", "<?pi data?>\n</algo>"), 20),
    ("doctype", "<!DOCTYPE algo>\n" + GOOD, 1),
    ("comment-word", GOOD.replace("</algo>", "<!--a=b -->\n</algo>"), 20),
    ("comment-word", GOOD.replace("</algo>", "<!--" + "w" * 260 + " -->\n</algo>"), 20),
    ("name-length", GOOD.replace("</algo>", "<" + "q" * 254 + "/>\n</algo>"), 20),
    ("name-length", _line13(STEP.replace("/>", " " + "k" * 255 + '="1"/>')), 13),
    ("value-length", GOOD.replace('name="x"', 'name="' + "é" * 128 + '"'), 1),  # 256 bytes
    ("attribute-count", _line13(STEP.replace("<step ", "<step" + " " * 8)), 13),
    ("step-children", _line13(STEP.replace("/>", "><nested/></step>")), 13),
    ("separator", _line13(STEP.replace(' cnt="1"', '\tcnt="1"')), 13),
    (
        "nesting",
        GOOD.replace("</algo>", "<x>\n" * 1001 + "</x>" * 1001 + "</algo>"),
        1019,
    ),  # algo + 1000
]


@pytest.mark.parametrize(
    "rule, text, line", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_reader_divergence_is_refused_naming_rule_and_line(rule, text, line, tmp_path, capsys):
    path = tmp_path / "algo.xml"
    path.write_bytes(text.encode("utf-8"))
    code = main(["check-xml", str(path), "--runtime", "rccl"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert f"[reader rule {rule}: msccl_parser.cc:" in err, err
    assert f": line {line}: " in err, err
    assert "@ rccl 0cbce2a7 / msccl-executor c6f6b36d]" in err


def test_the_good_file_and_what_the_reader_reads_alike_pass():
    assert check_xml(GOOD, RUNTIMES["rccl"]).collective == "allgather"
    alike = [
        GOOD.replace("\n", "\r\n"),  # CR is a separator to the reader (msccl_parser.cc:75, 107)
        GOOD.replace("\n  <gpu", "\n\n\n  <gpu"),
        GOOD.replace("</algo>", "<!-- a comment -->\n</algo>"),
        GOOD.replace("</algo>", "<!--plain-->\n</algo>"),
        GOOD.replace(
            "</algo>", "<!-- a=b, '--' and <tags/> inside -->\n</algo>".replace("'--' and ", "")
        ),
        _line13(STEP.replace("/>", " />")),  # one empty token: 11 of 16
        GOOD.replace('name="x"', 'name="' + "é" * 127 + 'a"'),  # 255 bytes: fits char[256]
        GOOD.replace('name="x"', 'name="it\'s &gt; fine"'.replace("&gt;", ">")),
        GOOD.replace("</algo>", '<unknown a="1"><child/></unknown>\n</algo>'),  # ignored elements
    ]
    for text in alike:
        assert check_xml(text, RUNTIMES["rccl"]).collective == "allgather", text[:80]


def test_attributes_past_the_sixteenth_token_are_what_the_reader_drops():
    # seven unknown attributes after the ten read ones: 17 tokens, the 17th is ignored by both
    extra = " ".join(f'x{i}="1"' for i in range(7))
    assert (
        check_xml(_line13(STEP.replace("/>", " " + extra + "/>")), RUNTIMES["rccl"]).collective
        == "allgather"
    )
    # the same seven before 'hasdep': hasdep is the 17th token, which the reader never keeps
    moved = STEP.replace(' hasdep="0"', "").replace("/>", " " + extra + ' hasdep="0"/>')
    with pytest.raises(
        MscclError, match=r"line 13: <step> attribute 'hasdep' comes after its first 16"
    ):
        check_xml(_line13(moved), RUNTIMES["rccl"])
    # and what the loader does not read is dropped from the program, as the reader drops it
    p = parse_xml(_line13(STEP.replace("/>", " " + extra + ' x7="1"/>')))
    assert isinstance(p, Program)


def test_character_reference_would_be_zero_to_strtol():
    # what the XML library reads (2) is not what the runtime reads (strtol("&#50;") == 0)
    import xml.etree.ElementTree as ET

    text = GOOD.replace('ngpus="2"', 'ngpus="&#50;"')
    assert ET.fromstring(text).get("ngpus") == "2"
    with pytest.raises(MscclError, match=re.escape("holds the reference '&#50;'")):
        check_xml(text, RUNTIMES["msccl-executor"])


def test_exported_names_with_markup_characters_are_read_back_as_written(tmp_path):
    p = parse_xml(GOOD)
    p.name = 'a&b<c>"d"\n' + "é" * 300
    text = to_xml(p)
    name = re.search(r'name="([^"]*)"', text).group(1)
    assert "&" not in name and len(name.encode()) <= 254
    assert check_xml(text, RUNTIMES["rccl"]).collective == "allgather"
    p.comments = ["a---b----c -->", "-", "x--"]  # no '--' may reach a comment
    assert check_xml(to_xml(p), RUNTIMES["rccl"]).collective == "allgather"


@pytest.mark.parametrize("path", sorted(REAL.glob("*.xml"))[:4], ids=lambda p: p.name)
def test_real_files_pass_the_reader_rules(path):
    from solver.msccl.reader import scan

    scan(path.read_text(), str(path))  # raises on any divergence
