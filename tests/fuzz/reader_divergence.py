"""Hypothesis strategy: MSCCL XML that an XML library reads but the runtimes' own reader does not
(or reads otherwise), one divergence per example, with the reader rule check-xml must name.

Each example starts from a seed that passes ``check-xml`` and applies one edit from
:data:`EDITS` at a drawn place. Every edit keeps the file well-formed XML (ElementTree reads it,
usually to the same values), so only a reader that behaves like RCCL's / msccl-executor's
(msccl_parser.cc:18-214, see solver/msccl/reader.py) can refuse it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import strategies as st

_ATTR = re.compile(r' ([A-Za-z_]+)="([^"]*)"')
_CLOSE = re.compile(r"</[A-Za-z_]+>")
_STEP = re.compile(r"<step [^>]*/>")


@dataclass(frozen=True)
class Divergent:
    text: str
    rule: str  # the reader rule check-xml must name
    edit: str


def _at(draw, pattern: re.Pattern, text: str) -> re.Match:
    found = list(pattern.finditer(text))
    return found[draw(st.integers(0, len(found) - 1))]


def _insert_before_close(draw, text: str, piece: str) -> str:
    m = _at(draw, _CLOSE, text)
    return text[: m.start()] + piece + text[m.start() :]


def _reference(draw, text):
    m = _at(draw, _ATTR, text)
    value = m.group(2) or "0"
    ref = draw(st.sampled_from([f"&#{ord(value[0])};", f"&#x{ord(value[0]):x};"]))
    return (
        text[: m.start(2)] + ref + value[1:] + text[m.end(2) :]
        if m.group(2)
        else (text[: m.start(2)] + "&amp;" + text[m.end(2) :])
    )


def _quote(draw, text):
    m = _at(draw, _ATTR, text)
    return text[: m.start(2) - 1] + "'" + m.group(2) + "'" + text[m.end(2) + 1 :]


def _newline(draw, text):
    m = _at(draw, _ATTR, text)
    return (
        text[: m.start()]
        + draw(st.sampled_from(["\n", "\r\n", "\n  ", "\r"]))
        + text[m.start() + 1 :]
    )


def _equals(draw, text):
    m = _at(draw, _ATTR, text)
    eq = draw(st.sampled_from([" =", "= ", " = "]))
    return text[: m.end(1)] + eq + text[m.end(1) + 1 :]


def _cdata(draw, text):
    return _insert_before_close(
        draw, text, draw(st.sampled_from(["<![CDATA[ ]]>", "<![CDATA[x]]>"]))
    )


def _text(draw, text):
    return _insert_before_close(
        draw, text, draw(st.sampled_from(["x", "0", " 1 ", "\u00e9", "&lt;"]))
    )


def _close(draw, text):
    m = _at(draw, _CLOSE, text)
    return text[: m.end() - 1] + draw(st.sampled_from([" ", "  "])) + text[m.end() - 1 :]


def _declaration(draw, text):
    if draw(st.booleans()):
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + text
    return _insert_before_close(draw, text, "<?pi data?>")


def _comment(draw, text):
    word = draw(st.sampled_from(["a=b", "k=", "=", "w" * 260]))
    return _insert_before_close(draw, text, f"<!--{word} -->")


def _long_name(draw, text):
    return _insert_before_close(draw, text, "<" + "q" * draw(st.integers(254, 400)) + "/>")


def _long_value(draw, text):
    m = re.search(r' name="([^"]*)"', text)
    fill = draw(st.sampled_from(["a" * 256, "\u00e9" * 128, "\u20ac" * 90, "a" * 1000]))
    return text[: m.start(1)] + fill + text[m.end(1) :]


def _count(draw, text):
    m = _at(draw, _STEP, text)
    return text[: m.start() + 5] + " " * draw(st.integers(7, 12)) + text[m.start() + 5 :]


def _step_child(draw, text):
    m = _at(draw, _STEP, text)
    child = draw(st.sampled_from(["<x/>", "<step/>", "<tb></tb>"]))
    return text[: m.end() - 2] + ">" + child + "</step>" + text[m.end() :]


def _separator(draw, text):
    m = _at(draw, _ATTR, text)
    return text[: m.start()] + draw(st.sampled_from(["\t", " \t"])) + text[m.start() + 1 :]


def _deep(draw, text):
    n = draw(st.integers(1001, 20000))
    tag = draw(st.sampled_from(["x", "unknown", "algo"]))  # (a <step> in a <tb> is step-children)
    return _insert_before_close(draw, text, f"<{tag}>" * n + f"</{tag}>" * n)


EDITS = {
    "reference": ("reference", _reference),
    "single-quote": ("quote", _quote),
    "newline-between-attributes": ("newline-in-tag", _newline),
    "space-around-equals": ("equals-space", _equals),
    "cdata": ("cdata", _cdata),
    "text-content": ("text", _text),
    "space-in-closing-tag": ("close-tag", _close),
    "xml-declaration-or-pi": ("declaration", _declaration),
    "comment-first-word": ("comment-word", _comment),
    "long-element-name": ("name-length", _long_name),
    "long-value": ("value-length", _long_value),
    "17-attribute-tokens": ("attribute-count", _count),
    "step-child-element": ("step-children", _step_child),
    "tab-separator": ("separator", _separator),
    "deep-nesting": ("nesting", _deep),
}


@st.composite
def reader_divergent_xml(draw, seed_text: str, name: str) -> Divergent:
    """``seed_text`` with the divergence ``name`` (a key of :data:`EDITS`) at a drawn place."""
    rule, edit = EDITS[name]
    return Divergent(edit(draw, seed_text), rule, name)
