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


@dataclass(slots=True, eq=False)  # each subclass says what equal means (a planned op: itself)
class Move:
    """What a step moves: ``cnt`` chunks from buffer ``srcbuf`` (``i``, ``o`` or ``s``) at chunk
    ``srcoff`` to ``dstbuf`` at ``dstoff``, the way ``type`` says (``s`` send, ``r`` receive,
    ``rrc`` receive-reduce-copy, ``cpy``, ``re`` local reduce, ``nop``...). One record for the
    three things that carry it: a <step> (:class:`Step`), a transmission the loader makes of
    steps (:class:`solver.msccl.lowering.Transmission`) and an operation the exporter plans
    (``solver.msccl.generate``)."""

    type: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int


@dataclass(slots=True, kw_only=True)
class Step(Move):
    """A <step>: its move, its index ``s`` in the threadblock, the step it waits for (``deps``
    of threadblock ``depid``, -1: none) and whether others wait for it (``hasdep``)."""

    s: int
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
        if (
            code < 0x20
            or 0x7F <= code < 0xA0
            or 0xD800 <= code < 0xE000
            or code in (0xFFFE, 0xFFFF)
        ):
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


_COMMENT_DASHES = re.compile(r"-{2,}")  # XML comments cannot hold '--'


def _attr(value) -> str:
    """An attribute value as ElementTree writes it (the same escapes)."""
    text = str(value)
    if any(ch in text for ch in '&<>"\r\n\t'):
        text = (
            text.replace("&", "&amp;")
            .replace("<", "&lt;")
            .replace(">", "&gt;")
            .replace('"', "&quot;")
            .replace("\r", "&#13;")
            .replace("\n", "&#10;")
            .replace("\t", "&#09;")
        )
    return text


def _tag(name: str, attrs: dict, indent: str, empty: bool) -> str:
    body = " ".join(f'{k}="{_attr(v)}"' for k, v in attrs.items())
    return f"{indent}<{name} {body}{' />' if empty else '>'}"


def to_xml(program: Program) -> str:
    """The XML text of ``program`` (attribute order as the MSCCL tools write it), written line by
    line: the same text ``ElementTree.indent`` + ``tostring`` give, without building a tree (a
    1024-rank program has two million steps)."""
    algo = {
        "name": attribute_text(program.name or ""),
        "proto": program.proto,
        "nchannels": program.nchannels,
        "nchunksperloop": program.nchunksperloop,
        "ngpus": program.ngpus,
        "coll": program.coll,
        "inplace": program.inplace,
        "outofplace": program.outofplace,
        "minBytes": program.min_bytes,
        "maxBytes": program.max_bytes,
    }
    if not program.comments and not program.gpus:
        return _tag("algo", algo, "", True) + "\n"
    out = [_tag("algo", algo, "", False)]
    for text in program.comments:
        out.append(f"  <!-- {_COMMENT_DASHES.sub('-', printable(text))} -->")
    for g in program.gpus:
        gpu = {"id": g.id, "i_chunks": g.i_chunks, "o_chunks": g.o_chunks, "s_chunks": g.s_chunks}
        out.append(_tag("gpu", gpu, "  ", not g.tbs))
        for tb in g.tbs:
            out.append(
                _tag(
                    "tb",
                    {"id": tb.id, "send": tb.send, "recv": tb.recv, "chan": tb.chan},
                    "    ",
                    not tb.steps,
                )
            )
            plain = all(
                st.type.isalnum() and st.srcbuf.isalnum() and st.dstbuf.isalnum() for st in tb.steps
            )
            for st in tb.steps:
                if plain:  # the common case, written directly
                    out.append(
                        f'      <step s="{st.s}" type="{st.type}" srcbuf="{st.srcbuf}" '
                        f'srcoff="{st.srcoff}" dstbuf="{st.dstbuf}" dstoff="{st.dstoff}" '
                        f'cnt="{st.cnt}" depid="{st.depid}" deps="{st.deps}" hasdep="{st.hasdep}" />'
                    )
                else:
                    out.append(_tag("step", _step_attrs(st), "      ", True))
            if tb.steps:
                out.append("    </tb>")
        if g.tbs:
            out.append("  </gpu>")
    out.append("</algo>")
    return "\n".join(out) + "\n"


def _step_attrs(st: Step) -> dict:
    return {
        "s": st.s,
        "type": st.type,
        "srcbuf": st.srcbuf,
        "srcoff": st.srcoff,
        "dstbuf": st.dstbuf,
        "dstoff": st.dstoff,
        "cnt": st.cnt,
        "depid": st.depid,
        "deps": st.deps,
        "hasdep": st.hasdep,
    }


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


_FEED = 1 << 20  # characters fed to the XML parser at a time


def _parse(text: str, where: str) -> Program:
    """Stream the XML (a 256 MB file never becomes a tree in memory): ``<gpu>`` children of
    ``<algo>``, their ``<tb>`` children and those ``<step>`` children are read as they end, and
    each ``<gpu>`` is dropped once read. Errors come in the order a whole-tree read gives them:
    the XML's own first, then the top element, then attributes in document order."""
    reader.scan(text, where)  # what the runtimes' own reader fails on or misreads
    parser = ET.XMLPullParser(events=("start", "end"))
    stack: list[str] = []
    state = _Reading()
    try:
        for at in range(0, len(text), _FEED):
            parser.feed(text[at : at + _FEED])
            _events(parser, stack, state)
        parser.close()
        _events(parser, stack, state)
    except ET.ParseError as exc:
        raise MscclError(f"{where}: not well-formed XML ({exc})") from None
    if state.error is not None:
        raise state.error
    return state.program


@dataclass
class _Reading:
    program: Program | None = None
    gpu: Gpu | None = None
    tb: Threadblock | None = None
    gw: str = ""
    tw: str = ""
    error: MscclError | None = None  # the first one, raised once the whole XML is read


def _events(parser, stack: list[str], state: _Reading) -> None:
    for kind, el in parser.read_events():
        if kind == "start":
            stack.append(el.tag)
            if state.error is not None:
                continue
            try:
                _start(el, len(stack), stack, state)
            except MscclError as exc:
                state.error = exc
            continue
        depth = len(stack)
        stack.pop()
        if state.error is None and depth == 4 and el.tag == "step" and state.tb is not None:
            try:
                state.tb.steps.append(_step(el.attrib, state.tw))
            except MscclError as exc:
                state.error = exc
        if depth == 2:
            el.clear()  # a <gpu> is read: drop its elements
            state.gpu = state.tb = None
        elif depth == 3:
            state.tb = None


def _start(el: ET.Element, depth: int, stack: list[str], state: _Reading) -> None:
    if depth == 1:
        if el.tag != "algo":
            raise MscclError(f"the top element must be <algo>, got <{_clip(el.tag)}>")
        state.program = _algo(el)
    elif depth == 2 and el.tag == "gpu":
        state.gw = f"gpu {_clip(el.get('id', '?'))}"
        state.gpu = Gpu(
            id=_required(el, "id", state.gw),
            i_chunks=_required(el, "i_chunks", state.gw),
            o_chunks=_required(el, "o_chunks", state.gw),
            s_chunks=_required(el, "s_chunks", state.gw),
        )
        state.program.gpus.append(state.gpu)
    elif depth == 3 and el.tag == "tb" and stack[1] == "gpu":
        tw = state.tw = f"{state.gw} tb {_clip(el.get('id', '?'))}"
        state.tb = Threadblock(
            id=_required(el, "id", tw),
            send=_required(el, "send", tw),
            recv=_required(el, "recv", tw),
            chan=_required(el, "chan", tw),
        )
        state.gpu.tbs.append(state.tb)


def _algo(root: ET.Element) -> Program:
    get = root.get
    return Program(
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


_STEP_INTS = ("s", "srcoff", "dstoff", "cnt", "depid", "deps", "hasdep")
_SMALL = re.compile(r"-?(0|[1-9][0-9]{0,8})")  # surely an int32


def _step(a: dict, tw: str) -> Step:
    """A <step> from its attributes: plain small integers take the fast path, anything else
    (or a missing attribute) the checks of :func:`read_int` with the step named."""
    try:
        ints = [int(a[k]) if _SMALL.fullmatch(a[k]) else None for k in _STEP_INTS]
        kind, srcbuf, dstbuf = a["type"], a["srcbuf"], a["dstbuf"]
    except KeyError:
        ints = [None]
    if None in ints:
        sw = f"{tw} step {_clip(a.get('s', '?'))}"
        return Step(
            s=_required_attr(a, "s", sw),
            type=_required_str_attr(a, "type", sw),
            srcbuf=_required_str_attr(a, "srcbuf", sw),
            srcoff=_required_attr(a, "srcoff", sw),
            dstbuf=_required_str_attr(a, "dstbuf", sw),
            dstoff=_required_attr(a, "dstoff", sw),
            cnt=_required_attr(a, "cnt", sw),
            depid=_required_attr(a, "depid", sw),
            deps=_required_attr(a, "deps", sw),
            hasdep=_required_attr(a, "hasdep", sw),
        )
    s, srcoff, dstoff, cnt, depid, deps, hasdep = ints
    return Step(
        kind, srcbuf, srcoff, dstbuf, dstoff, cnt, s=s, depid=depid, deps=deps, hasdep=hasdep
    )


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


def _required_attr(a: dict, name: str, where: str) -> int:
    value = read_int(a.get(name), where, name)
    if value is None:
        raise MscclError(
            f"{where}: missing attribute {name!r} (mscclXmlGetAttrStr fails, msccl_parser.h:69-72)"
        )
    return value


def _required_str_attr(a: dict, name: str, where: str) -> str:
    value = a.get(name)
    if value is None:
        raise MscclError(
            f"{where}: missing attribute {name!r} (mscclXmlGetAttrStr fails, msccl_parser.h:69-72)"
        )
    return value
