"""The MSCCL XML program: <algo> / <gpu> / <tb> / <step>, written and read back.

:func:`to_xml` writes what the runtimes load; :func:`parse_xml` reads an XML into a
:class:`Program` (structure and integers only; the runtimes' rules are in
:mod:`solver.msccl.rules`). Integers are read as the runtimes read them (``strtol``) would, and
anything they would read differently (``010`` is octal to ``strtol``, ``12abc`` is 12) is refused.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from solver.msccl import reader
from solver.msccl.runtimes import INT32, INT64, MscclError

BUFFERS = ("i", "o", "s")


@dataclass
class Step:
    s: int
    type: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int
    depid: int = -1
    deps: int = -1
    hasdep: int = 0


@dataclass
class Threadblock:
    id: int
    send: int
    recv: int
    chan: int
    steps: list[Step] = field(default_factory=list)


@dataclass
class Gpu:
    id: int
    i_chunks: int
    o_chunks: int
    s_chunks: int
    tbs: list[Threadblock] = field(default_factory=list)


@dataclass
class Program:
    """An <algo>. Attributes a runtime may do without are None when the file lacks them."""

    name: str | None
    proto: str | None
    nchannels: int | None
    nchunksperloop: int | None
    ngpus: int | None
    coll: str | None
    inplace: int | None
    outofplace: int | None
    min_bytes: int | None
    max_bytes: int | None
    gpus: list[Gpu] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ statistics
    def num_threadblocks(self) -> int:
        return max((len(g.tbs) for g in self.gpus), default=0)

    def max_steps(self) -> int:
        return max((len(tb.steps) for g in self.gpus for tb in g.tbs), default=0)

    def num_steps(self) -> int:
        return sum(len(tb.steps) for g in self.gpus for tb in g.tbs)


# ---------------------------------------------------------------------------- writing
NAME_MAX = 254  # bytes: the runtimes read attribute values into char[MAX_STR_LEN+1] (msccl_parser.h:20, 34)
_MARKUP = {"&": "\\u0026", "<": "\\u003c", ">": "\\u003e", '"': "\\u0022"}


def attribute_text(text: str) -> str:
    """``text`` as an attribute value the runtimes' reader takes byte for byte: printable, no
    character XML would write as a reference (the reader never decodes one), at most
    ``NAME_MAX`` bytes."""
    out = "".join(_MARKUP.get(ch, ch) for ch in printable(text[: NAME_MAX * 2]))[:NAME_MAX]
    while len(out.encode("utf-8")) > NAME_MAX:
        out = out[:-1]
    return out


def printable(text: str) -> str:
    """``text`` with control characters and lone surrogates written as ``\\uXXXX``.

    XML 1.0 cannot hold them (an XML with ``\\x01`` in a comment cannot be read back) and a lone
    surrogate cannot be encoded in UTF-8, so ids carrying them are escaped, never written raw.
    """
    out = []
    for ch in text:
        code = ord(ch)
        if code < 0x20 or 0x7F <= code < 0xA0 or 0xD800 <= code < 0xE000 or code in (0xFFFE, 0xFFFF):
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


_COMMENT_DASHES = re.compile(r"-{2,}")  # XML comments cannot hold '--'


def to_xml(program: Program) -> str:
    """The XML text of ``program`` (attribute order as the MSCCL tools write it)."""
    algo = ET.Element(
        "algo",
        {
            "name": attribute_text(program.name or ""),
            "proto": program.proto,
            "nchannels": str(program.nchannels),
            "nchunksperloop": str(program.nchunksperloop),
            "ngpus": str(program.ngpus),
            "coll": program.coll,
            "inplace": str(program.inplace),
            "outofplace": str(program.outofplace),
            "minBytes": str(program.min_bytes),
            "maxBytes": str(program.max_bytes),
        },
    )
    for text in program.comments:
        algo.append(ET.Comment(f" {_COMMENT_DASHES.sub('-', printable(text))} "))
    for g in program.gpus:
        ge = ET.SubElement(
            algo,
            "gpu",
            {
                "id": str(g.id),
                "i_chunks": str(g.i_chunks),
                "o_chunks": str(g.o_chunks),
                "s_chunks": str(g.s_chunks),
            },
        )
        for tb in g.tbs:
            te = ET.SubElement(
                ge,
                "tb",
                {
                    "id": str(tb.id),
                    "send": str(tb.send),
                    "recv": str(tb.recv),
                    "chan": str(tb.chan),
                },
            )
            for st in tb.steps:
                ET.SubElement(
                    te,
                    "step",
                    {
                        "s": str(st.s),
                        "type": st.type,
                        "srcbuf": st.srcbuf,
                        "srcoff": str(st.srcoff),
                        "dstbuf": st.dstbuf,
                        "dstoff": str(st.dstoff),
                        "cnt": str(st.cnt),
                        "depid": str(st.depid),
                        "deps": str(st.deps),
                        "hasdep": str(st.hasdep),
                    },
                )
    ET.indent(algo, space="  ")
    return ET.tostring(algo, encoding="unicode") + "\n"




# ---------------------------------------------------------------------------- parsing
INT_DIGITS = 20  # longer than any int64: refused before conversion
_PLAIN = re.compile(r"-?(0|[1-9][0-9]{0,17})")  # fits an int64 with room to spare


def read_int(value: str | None, where: str, name: str, bits: int = 32) -> int | None:
    """An integer attribute as the runtimes read it, or None when absent.

    The runtimes convert with ``strtol(str, NULL, 0)`` into an ``int`` (``strtoll`` into an
    ``int64_t`` for minBytes/maxBytes; msccl_parser.h:75-87): base 0 reads ``010`` as octal 8
    and ``0x10`` as hex, trailing text is dropped and out-of-range values wrap. Only plain decimal
    integers in range are accepted, so what we check is what they load.
    """
    if value is None:
        return None
    if _PLAIN.fullmatch(value):  # the common case: a plain decimal that fits
        number = int(value)
        if INT32[0] <= number <= INT32[1] or bits == 64:
            return number
    text = value.strip()
    body = text[1:] if text[:1] in "+-" else text
    if not body.isdigit() or not body.isascii() or len(body) > INT_DIGITS:
        raise MscclError(
            f"{where}: {name}={_clip(value)!r} is not a decimal integer (msccl_parser.h:78 reads it "
            "with strtol base 0)"
        )
    if len(body) > 1 and body[0] == "0":
        raise MscclError(
            f"{where}: {name}={value!r} has a leading zero, which strtol base 0 reads as octal "
            "(msccl_parser.h:78)"
        )
    number = int(text)
    low, high = INT32 if bits == 32 else INT64
    if not low <= number <= high:
        raise MscclError(
            f"{where}: {name}={number} does not fit the runtime's {bits}-bit integer "
            f"(msccl_parser.h:{78 if bits == 32 else 85})"
        )
    return number


def _clip(value: str) -> str:
    return value if len(value) <= 40 else value[:37] + "..."


def parse_xml(text: str, where: str = "<xml>") -> Program:
    """Parse MSCCL XML into a :class:`Program` (structure and integers; rules come later)."""
    try:
        return _parse(text, where)
    except MscclError as exc:
        message = str(exc)
        raise MscclError(message if message.startswith(where) else f"{where}: {message}") from None
    except RecursionError:
        raise MscclError(f"{where}: elements nested too deeply") from None


def _parse(text: str, where: str) -> Program:
    reader.scan(text, where)  # what the runtimes' own reader fails on or misreads
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise MscclError(f"{where}: not well-formed XML ({exc})") from None
    if root.tag != "algo":
        raise MscclError(f"{where}: the top element must be <algo>, got <{_clip(root.tag)}>")
    get = root.get
    p = Program(
        name=get("name"),
        proto=get("proto"),
        nchannels=read_int(get("nchannels"), "algo", "nchannels"),
        nchunksperloop=read_int(get("nchunksperloop"), "algo", "nchunksperloop"),
        ngpus=read_int(get("ngpus"), "algo", "ngpus"),
        coll=get("coll"),
        inplace=read_int(get("inplace"), "algo", "inplace"),
        outofplace=read_int(get("outofplace"), "algo", "outofplace"),
        min_bytes=read_int(get("minBytes"), "algo", "minBytes", 64),
        max_bytes=read_int(get("maxBytes"), "algo", "maxBytes", 64),
    )
    for ge in root.findall("gpu"):
        p.gpus.append(_parse_gpu(ge))
    return p


def _required(el: ET.Element, name: str, where: str, bits: int = 32) -> int:
    value = read_int(el.get(name), where, name, bits)
    if value is None:
        raise MscclError(
            f"{where}: missing attribute {name!r} (mscclXmlGetAttrStr fails, msccl_parser.h:69-72)"
        )
    return value


def _required_str(el: ET.Element, name: str, where: str) -> str:
    value = el.get(name)
    if value is None:
        raise MscclError(
            f"{where}: missing attribute {name!r} (mscclXmlGetAttrStr fails, msccl_parser.h:69-72)"
        )
    return value


def _parse_gpu(ge: ET.Element) -> Gpu:
    gw = f"gpu {_clip(ge.get('id', '?'))}"
    g = Gpu(
        id=_required(ge, "id", gw),
        i_chunks=_required(ge, "i_chunks", gw),
        o_chunks=_required(ge, "o_chunks", gw),
        s_chunks=_required(ge, "s_chunks", gw),
    )
    for te in ge.findall("tb"):
        tw = f"{gw} tb {_clip(te.get('id', '?'))}"
        tb = Threadblock(
            id=_required(te, "id", tw),
            send=_required(te, "send", tw),
            recv=_required(te, "recv", tw),
            chan=_required(te, "chan", tw),
        )
        for se in te.findall("step"):
            sw = f"{tw} step {_clip(se.get('s', '?'))}"
            tb.steps.append(
                Step(
                    s=_required(se, "s", sw),
                    type=_required_str(se, "type", sw),
                    srcbuf=_required_str(se, "srcbuf", sw),
                    srcoff=_required(se, "srcoff", sw),
                    dstbuf=_required_str(se, "dstbuf", sw),
                    dstoff=_required(se, "dstoff", sw),
                    cnt=_required(se, "cnt", sw),
                    depid=_required(se, "depid", sw),
                    deps=_required(se, "deps", sw),
                    hasdep=_required(se, "hasdep", sw),
                )
            )
        g.tbs.append(tb)
    return g
