"""The runtimes' own XML reader, rule by rule: what it cannot read, or reads differently.

RCCL and msccl-executor-nccl do not parse MSCCL XML with an XML library. They read it byte by
byte with a small reader of their own (``src/misc/msccl/msccl_parser.cc:18-157`` and
``src/include/msccl/msccl_parser.h:19-35``, identical in ROCm/rccl 0cbce2a7 and
Azure/msccl-executor-nccl c6f6b36d; the newest RCCL, ``projects/rccl`` of ROCm/rocm-systems (read
in the fork harsh-nod/rocm-systems b921529d: the stored ROCm snapshot 1b1610fc has no
projects/rccl), has the same code with ``MSCCL_``-prefixed constants five lines further down; the legacy
microsoft/msccl b23e9cd5 reader is NCCL's ``src/graph/xml.cc:20-159``, the same code two lines
further down). :func:`scan` walks the text the way that reader does and refuses, with the file's
line and one rule named after the reader's behaviour, every file the reader fails on or would read
differently from the XML parser that builds our :class:`~solver.msccl.program.Program`:

==================  ==========================================================================
rule                the reader (msccl_parser.cc lines of rccl 0cbce2a7)
==================  ==========================================================================
separator           separates tokens with space, newline or CR only (75, 107); a tab, form
                    feed or vertical tab joins the next name or stops the file
text                between elements expects ``<`` after blanks (107-113): text content,
                    CDATA, a BOM fail
cdata               ``<![CDATA[`` is read as an element name (115), never as text
declaration         ``<?xml ...?>`` / a processing instruction is an element ``?xml`` whose
                    ``?`` stops it ("expected >", 152) or that swallows the rest of the file
doctype             ``<!DOCTYPE``/``<!ENTITY`` are elements to it, not declarations (115)
comment-word        a comment's first word is read as an element name (115-121): ``=`` in it
                    fails (60-65), 254 bytes or more fail (69-73)
newline-in-tag      attributes are read only while the separator is a space (139); a newline
                    or CR inside a tag ends it and fails ("expected >", 152-155)
close-tag           a closing tag must end right after its name (124-131): ``</algo >`` fails
name-length         names and keys go into char[256] and stop at 254 bytes (69-73,
                    msccl_parser.h:31-34)
quote               a value must start with ``"`` (29-43); a value opened with ``'`` runs to
                    the next ``"`` (45-48), so single-quoted values are misread
equals-space        ``key ="v"`` is a key with an empty value then a nameless one (60, 75:
                    ``strtol("")`` is 0); ``key= "v"`` fails (29-43)
reference           values are taken byte for byte (45-49): ``&#50;``, ``&amp;``... are not
                    decoded (``ngpus="&#50;"`` is 0 to strtol)
value-length        a value goes into char[256] without a bound check (45-48,
                    msccl_parser.h:34): 256 bytes or more overflow it
attribute-count     at most MAX_ATTR_COUNT = 16 attribute tokens are kept per element (138-146,
                    msccl_parser.h:21, 35); every extra space is a token too
step-children       a <step> with a child element reaches the NULL handler list (193-194,
                    211-214): the reader crashes
nesting             the reader recurses once per element level without a bound (166, 199,
                    206): more than MAX_DEPTH = 1000 levels are refused (a file needs 4)
==================  ==========================================================================

Where the reader accepts more than XML does (``--`` in a comment, ``<`` in a value, a tag
``<x/junk>``), the XML parser refuses the file: stricter, never kinder.
"""

from __future__ import annotations

import re

from solver.msccl.runtimes import MscclError

SOURCE = "rccl 0cbce2a7 / msccl-executor c6f6b36d"
MAX_ATTR_COUNT = 16  # msccl_parser.h:21
MAX_DEPTH = 1000  # ours: the reader's recursion (msccl_parser.cc:199, 206) has no bound
VALUE_BYTES = (
    255  # value[MAX_STR_LEN+1] holds the value and its terminating NUL (msccl_parser.h:34)
)
NAME_BYTES = 253  # GetToken fails when the 255th byte of a name is read (msccl_parser.cc:69-73)
KEY_BYTES = 254  # ... unless it is the '=' ending a key (msccl_parser.cc:60 is tested first)

# attributes the loaders read, per element (msccl_parser.cc:315-388, 399-416, 472-483; legacy
# topo.cc reads name too)
READ = {
    "algo": {
        "name",
        "proto",
        "nchannels",
        "nchunksperloop",
        "ngpus",
        "coll",
        "inplace",
        "outofplace",
        "minBytes",
        "maxBytes",
    },
    "gpu": {"id", "i_chunks", "o_chunks", "s_chunks"},
    "tb": {"id", "send", "recv", "chan"},
    "step": {"s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep"},
}

_TOKEN = re.compile(r"[^ >/\n\r=]*")  # what ends a token (msccl_parser.cc:60, 75)
_BLANK = re.compile(r"[ \n\r]*")
_SPACES = re.compile(r" +")
# the common case, matched whole: canonical tags of printable ASCII (no '&', '<', '"' in values),
# one space before each of at most 16 attributes, short names and values
_NAME = r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}"
_VALUE = r'"[\x20\x21\x23-\x25\x27-\x3b\x3d-\x7e]{0,200}"'
_FAST = re.compile(
    # (a space before '/>' or '>', as ElementTree writes it, is one more, empty, token)
    rf"[ \n\r]*(?:<({_NAME})(?:(?: {_NAME}={_VALUE}){{0,16}}|(?: {_NAME}={_VALUE}){{0,15}} )(/?)>"
    rf"|</({_NAME})>"
    # a comment whose first word (read as an element name, 115-121) is plain and short; it ends
    # at the first '-->' after '<!--' (93-100)
    r"|<!--(?=[^ >/\n\r=]{0,250}[ >/\n\r])(?s:.*?)-->)"
)
_CANONICAL_RUN = re.compile(rf"(?: {_NAME}={_VALUE})+")  # attributes the slow path takes at once
_RUN_KEY = re.compile(rf" ({_NAME})={_VALUE}")
_STEP_PATH = ["algo", "gpu", "tb", "step"]


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _fail(where: str, text: str, pos: int, rule: str, message: str, cite: str) -> MscclError:
    return MscclError(
        f"{where}: line {_line(text, pos)}: {message} [reader rule {rule}: msccl_parser.cc:{cite} @ "
        f"{SOURCE}]"
    )


def scan(text: str, where: str = "<xml>") -> None:
    """Walk ``text`` as the runtimes' reader does; raise :class:`MscclError` at the first place
    where it fails or reads something else than XML means (see the module docstring). Linear in
    the text: the common tag is matched whole by one regular expression."""
    pos, end = 0, len(text)
    stack: list[str] = []
    fast = _FAST.match
    while True:
        m = fast(text, pos)
        if m is not None:
            name = m.group(1)
            if name is None:
                if stack:
                    stack.pop()
            else:
                if stack == _STEP_PATH:
                    raise _step_child(text, m.start(1) - 1, where, name)
                if not m.group(2):
                    stack.append(name)
                    if len(stack) > MAX_DEPTH:
                        raise _too_deep(text, m.start(1) - 1, where)
            pos = m.end()
            continue
        pos = _BLANK.match(text, pos).end()
        if pos >= end:
            return
        depth = len(stack)
        read = _STEP_PATH[depth] if depth < len(_STEP_PATH) and stack == _STEP_PATH[:depth] else ""
        pos, opened, name, closing = _node(text, pos, where, read)
        if opened:
            if stack == _STEP_PATH:
                raise _step_child(text, pos - 1, where, name)
            if text[pos - 2] != "/":
                stack.append(name)
                if len(stack) > MAX_DEPTH:
                    raise _too_deep(text, pos - 1, where)
        elif closing and stack:
            stack.pop()


def _too_deep(text: str, pos: int, where: str) -> MscclError:
    return _fail(
        where,
        text,
        pos,
        "nesting",
        f"elements nested more than {MAX_DEPTH} deep; the reader recurses once per level with no "
        "bound (an MSCCL file needs 4), so deep nesting ends its stack",
        "166, 199, 206",
    )


def _step_child(text: str, pos: int, where: str, name: str) -> MscclError:
    return _fail(
        where,
        text,
        pos,
        "step-children",
        f"<step> has a child element <{name[:40]}>; the reader then calls a NULL handler list and "
        "crashes",
        "193-194, 211-214",
    )


def _separator(text: str, pos: int, where: str) -> MscclError:
    name = {"\t": "tab", "\f": "form feed", "\v": "vertical tab"}[text[pos]]
    return _fail(
        where,
        text,
        pos,
        "separator",
        f"a {name} between XML tokens (line {_line(text, pos)}); the runtimes' reader separates "
        "tokens with space, newline or carriage return only",
        "75, 107",
    )


def _token(text: str, pos: int, where: str, what: str, limit: int) -> tuple[str, int]:
    """A token from ``pos`` (a name or key) and the position of the byte that ended it."""
    m = _TOKEN.match(text, pos)
    stop = m.end()
    name = m.group()
    if "\t" in name or "\f" in name or "\v" in name:
        raise _separator(text, pos + min(name.find(c) for c in "\t\f\v" if c in name), where)
    size = len(name.encode("utf-8", "surrogatepass"))
    is_key_end = stop < len(text) and text[stop] == "="
    if size > (KEY_BYTES if is_key_end and limit == KEY_BYTES else NAME_BYTES):
        raise _fail(
            where,
            text,
            pos,
            "name-length",
            f"{what} {name[:40]!r}... is {size} bytes; the reader stops at {NAME_BYTES} "
            f"({KEY_BYTES} for a key before '=') with 'name too long'",
            "69-73, msccl_parser.h:31-34",
        )
    if stop >= len(text):
        raise _fail(
            where, text, pos, "text", "the file ends inside a tag ('Unexpected EOF')", "18-24"
        )
    return name, stop


def _node(text: str, pos: int, where: str, read: str) -> tuple[int, bool, str, bool]:
    """Read one node at ``pos`` (after blanks); returns (position after it, whether it opens an
    element, its name, whether it is a closing tag). ``read``: the element the loader reads at
    this place (<algo>, <gpu> in it, <tb> in that, <step> in that), or ""."""
    c = text[pos]
    if c in "\t\f\v":
        raise _separator(text, pos, where)
    if c != "<":
        what = "a byte-order mark" if c == "\ufeff" else f"text content {text[pos : pos + 20]!r}"
        raise _fail(
            where,
            text,
            pos,
            "text",
            f"{what} between elements; the reader expects '<' after blanks (\"expecting '<'\")",
            "107-113",
        )
    if text.startswith("<!--", pos):
        return _comment(text, pos, where), False, "", False
    if text.startswith("<![CDATA[", pos):
        raise _fail(
            where,
            text,
            pos,
            "cdata",
            "a CDATA section; the reader reads '<![CDATA[' as an element name, never as text",
            "115, 107-113",
        )
    if text.startswith("<!DOCTYPE", pos) or text.startswith("<!ENTITY", pos):
        raise _fail(
            where,
            text,
            pos,
            "doctype",
            "DOCTYPE/ENTITY declarations are not MSCCL XML (the runtimes' reader knows elements and "
            "comments only, and reads '<!DOCTYPE' as an element)",
            "104-157",
        )
    if text.startswith("<?", pos):
        first = not text[:pos].strip()
        what = (
            "starts with an XML declaration '<?...?>'"
            if first
            else "has a processing instruction '<?...?>'"
        )
        raise _fail(
            where,
            text,
            pos,
            "declaration",
            f"{what}, which the runtimes' reader reads as an element named '?...' (refused "
            "'expected >' or swallowing the rest of the file)",
            "115, 147-155",
        )
    if text.startswith("</", pos):
        name, stop = _token(text, pos + 2, where, "the closing tag's name", NAME_BYTES)
        if text[stop] != ">":
            raise (
                _rule_newline(text, stop, where)
                if text[stop] in "\n\r"
                else _fail(
                    where,
                    text,
                    stop,
                    "close-tag",
                    f"closing tag </{name[:40]}> has {text[stop]!r} after its name; the reader refuses "
                    "anything between the name and '>' ('unexpected trailing')",
                    "124-131",
                )
            )
        return stop + 1, False, name, True
    name, stop = _token(text, pos + 1, where, "the element name", NAME_BYTES)
    count = 0  # attribute tokens, as the reader counts them (every extra space is one)
    needed = READ[name] if name == read else ()
    c = text[stop]
    p = stop
    while c == " ":
        canonical = _CANONICAL_RUN.match(text, p)
        if canonical is not None:  # plain attributes, one space each: one token each
            attrs = canonical.group()
            n = attrs.count('="')
            if count + n > MAX_ATTR_COUNT and needed:
                late = set(_RUN_KEY.findall(attrs)[max(0, MAX_ATTR_COUNT - count) :]) & needed
                if late:
                    key = min(late)
                    at = text.find(f" {key}=", p) + 1
                    raise _attribute_count(text, at, where, name, key)
            count += n
            p = canonical.end()
            c = text[p] if p < len(text) else ""
            continue
        run = _SPACES.match(text, p).end()  # k spaces: k - 1 empty tokens, then a token
        count += run - p - 1
        p = run - 1
        key_at = p + 1
        key, p = _token(text, key_at, where, "the attribute name", KEY_BYTES)
        count += 1
        if count > MAX_ATTR_COUNT and key in needed:
            raise _attribute_count(text, key_at, where, name, key)
        c = text[p]
        if c == "=" and not key:
            raise _equals_space(text, key_at, where, "")
        if c == "=":
            p = _value(text, p + 1, where, key)
            c = text[p] if p < len(text) else ""
        elif (
            c == " "
            and key
            and text[_BLANK.match(text, p).end() : _BLANK.match(text, p).end() + 1] == "="
        ):
            raise _equals_space(text, p, where, key)
    if not c:
        raise _fail(
            where, text, p, "text", "the file ends inside a tag ('Unexpected EOF')", "18-24"
        )
    if c in "\n\r":
        raise _rule_newline(text, p, where)
    if c in "\t\f\v":
        raise _separator(text, p, where)
    if name.startswith("!"):
        raise _fail(
            where,
            text,
            pos,
            "doctype",
            f"markup '<{name[:20]}' that is neither an element nor a comment; the reader reads it "
            "as an element",
            "115-121",
        )
    if c == "/" and text.startswith("/>", p):
        return p + 2, True, name, False
    if c != ">":
        raise _fail(
            where,
            text,
            p,
            "close-tag",
            f"<{name[:40]}> ends with {text[p : p + 2]!r} instead of '>' or '/>' ('expected >')",
            "147-155",
        )
    return p + 1, True, name, False


def _attribute_count(text: str, pos: int, where: str, name: str, key: str) -> MscclError:
    return _fail(
        where,
        text,
        pos,
        "attribute-count",
        f"<{name}> attribute {key!r} comes after its first {MAX_ATTR_COUNT} attribute tokens "
        "(every extra space counts as one); the reader ignores it",
        "138-146, msccl_parser.h:21",
    )


def _equals_space(text: str, pos: int, where: str, key: str) -> MscclError:
    what = f"attribute {key[:40]!r} has" if key else "an attribute has no name, only"
    return _fail(
        where,
        text,
        pos,
        "equals-space",
        f"{what} a space before '='; the reader reads the name with an empty value (0 to strtol) "
        "and the value as a nameless attribute",
        "60-67, 75",
    )


def _rule_newline(text: str, pos: int, where: str) -> MscclError:
    return _fail(
        where,
        text,
        pos,
        "newline-in-tag",
        "a newline inside a tag; the reader reads attributes only while they are separated by "
        "single spaces and then expects '>' ('expected >, got newline')",
        "75, 139, 152-155",
    )


def _value(text: str, pos: int, where: str, key: str) -> int:
    """Check the value starting at ``pos`` (just after '='); returns the position after it."""
    q = text[pos] if pos < len(text) else ""
    if q == "'":
        raise _fail(
            where,
            text,
            pos,
            "quote",
            f"attribute {key[:40]!r} has a single-quoted value; the reader reads from ' to the next "
            "double quote, so it gets another value",
            "29, 45-48",
        )
    if q != '"':
        raise _fail(
            where,
            text,
            pos,
            "equals-space",
            f"attribute {key[:40]!r}: '=' is not followed by '\"'; the reader refuses it "
            "('Expected (double) quote')",
            "29-43",
        )
    close = text.find('"', pos + 1)
    if close < 0:
        raise _fail(
            where,
            text,
            pos,
            "text",
            "the file ends inside a value ('Unexpected EOF')",
            "18-24, 45-48",
        )
    value = text[pos + 1 : close]
    amp = value.find("&")
    if amp >= 0:
        ref = value[amp : amp + 12].split(";")[0] + ";"
        raise _fail(
            where,
            text,
            pos + 1 + amp,
            "reference",
            f"attribute {key[:40]!r} holds the reference {ref!r}; the reader takes values byte for "
            'byte and never decodes references (ngpus="&#50;" is 0 to strtol)',
            "45-49, msccl_parser.h:78",
        )
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > VALUE_BYTES:
        raise _fail(
            where,
            text,
            pos,
            "value-length",
            f"attribute {key[:40]!r} is {size} bytes; the reader copies values into char[256] "
            "without a bound (at most 255 bytes fit)",
            "44-49, msccl_parser.h:20, 34",
        )
    return close + 1


def _comment(text: str, pos: int, where: str) -> int:
    """A comment at ``pos``: its first word is read as an element name first (115-121)."""
    m = _TOKEN.match(text, pos + 1)
    stop = m.end()
    if stop < len(text) and text[stop] == "=":
        raise _fail(
            where,
            text,
            pos,
            "comment-word",
            "a comment whose first word holds '='; the reader reads that word as an element name "
            "and refuses it ('Unexpected value')",
            "60-65, 115-121",
        )
    size = len(m.group().encode("utf-8", "surrogatepass"))
    if size > NAME_BYTES:
        raise _fail(
            where,
            text,
            pos,
            "comment-word",
            f"a comment whose first word is {size - 3} bytes long; the reader reads it as an "
            f"element name and stops at {NAME_BYTES} bytes ('name too long')",
            "69-73, 115-121",
        )
    close = text.find("-->", pos + 4)
    if close < 0:
        raise _fail(where, text, pos, "text", "an unterminated comment", "93-100")
    return close + 3


__all__ = ["MAX_ATTR_COUNT", "READ", "scan"]
