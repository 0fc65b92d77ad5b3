"""solver.io.untrusted: bounded, exact reading of numbers and strings from hostile files."""

from __future__ import annotations

import time
from decimal import Decimal
from fractions import Fraction

import pytest

from solver.io import untrusted as u
from solver.model import values as v
from solver.model.errors import TopologyError


@pytest.mark.parametrize(
    "value, expected",
    [
        ("3.2", Fraction(16, 5)),
        (Decimal("12.5"), Fraction(25, 2)),
        (12.5, Fraction(25, 2)),
        ("1/3", Fraction(1, 3)),
        (" 7 ", Fraction(7)),
        ("1e3", Fraction(1000)),
        (10**39, Fraction(10**39)),
    ],
)
def test_exact_numbers_stay_exact(value, expected):
    assert v.exact_number(value, "bw") == expected


@pytest.mark.parametrize(
    "value, message",
    [
        ("1e999999999", "out of range"),
        (Decimal("1e999999999"), "out of range"),
        (Decimal("-1e-999999999"), "out of range"),
        ("9" * 41, "significant digits"),
        ("1" * 70, "number text is 70 characters"),
        ("1/" + "3" * 41, "digits"),
        ("1/0", "divides by zero"),
        ("nan", "must be finite"),
        (Decimal("Infinity"), "must be finite"),
        (float("inf"), "must be finite"),
        (True, "must be a number"),
        ("12 GB/s", "must be a number"),
        pytest.param(10**5000, "out of range", id="int-5000-digits"),
        ([1], "must be a number"),
    ],
)
def test_hostile_numbers_are_one_line_errors_in_bounded_time(value, message):
    start = time.process_time()
    with pytest.raises(TopologyError, match="bw") as info:
        v.exact_number(value, "bw")
    assert message in str(info.value)
    assert "\n" not in str(info.value) and len(str(info.value)) < 200
    assert time.process_time() - start < 0.5


def test_ranges_name_the_bound():
    with pytest.raises(TopologyError, match="at most 1e\\+09"):
        v.exact_number("2e9", "bw", maximum=v.MAX_BANDWIDTH)
    with pytest.raises(TopologyError, match="between -1e\\+09 and 1e\\+09"):
        v.bounded_float("1e20", "x")
    assert v.bounded_float("-2.5", "x") == -2.5


def test_bounded_int_measures_text_first():
    assert v.bounded_int("0x55", "m", base=0) == 0x55
    with pytest.raises(TopologyError, match="at most 64"):
        v.bounded_int("9" * 5000, "n")  # Python's own 4300-digit ValueError never happens
    with pytest.raises(TopologyError, match="must be at most 10"):
        v.bounded_int("11", "n", maximum=10)
    with pytest.raises(TopologyError, match="whole number"):
        v.bounded_int("two", "n")


@pytest.mark.parametrize("text", ["a\x01b", "\x1b[31mred", "x\ud800", "tab\there", "", "a" * 300])
def test_identifiers_refuse_what_xml_cannot_hold(text):
    with pytest.raises(TopologyError):
        v.identifier(text, "node id")


def test_text_values_allow_tabs_and_newlines_but_not_controls():
    assert v.text_value("two\nlines\t", "role") == "two\nlines\t"
    with pytest.raises(TopologyError, match="U\\+0007"):
        v.text_value("bell\x07", "role")


def test_parse_json_bounds_depth_numbers_and_keeps_decimals():
    assert u.parse_json('{"a": [1.5, 2]}', "f") == {"a": [Decimal("1.5"), 2]}
    for text, message in [
        ("[" * 5000 + "]" * 5000, "nested more than 64"),
        ("[" * 70 + "]" * 70, "nested more than 64"),
        ("[" + "9" * 5000 + "]", "5000 characters"),
        ('{"a": 1', "invalid JSON"),
    ]:
        with pytest.raises(TopologyError, match=message):
            u.parse_json(text, "f")
    # NaN/Infinity parse as Decimals so that a number reader can name the field
    with pytest.raises(TopologyError, match="out of range"):
        u.json_value(u.parse_json('{"k": Infinity}', "f"), "f")


def test_parse_xml_refuses_entities_and_deep_nesting():
    bomb = '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaa">]><l>&a;</l>'
    with pytest.raises(TopologyError, match="ENTITY"):
        u.parse_xml(bomb, "f.xml")
    deep = "<a>" * 2000 + "</a>" * 2000
    with pytest.raises(TopologyError, match="nested more than 64"):
        u.parse_xml(deep, "f.xml")
    with pytest.raises(TopologyError, match="f.xml:1:"):
        u.parse_xml("<a><b></a>", "f.xml")
