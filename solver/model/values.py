"""The one place that turns numbers and strings from files we did not write into values.

The documents around them (JSON, XML) are parsed with bounded depth by :mod:`solver.io.untrusted`;
this module is pure (it lives in the model layer because :func:`solver.model.topology.validate`
applies the same ranges to fabrics built in code).

Every reader (fabric formats, results files, nccl-tests logs, MSCCL XML) goes through these
functions, so a hostile file gets the same treatment everywhere: one error naming the place, in
bounded time and memory, never a hang, an overflow or a traceback.

Why bounds before conversion: ``Fraction(Decimal("1e999999999"))`` is an 11-byte number that
takes minutes (it builds a billion-digit integer), ``int("9" * 5000)`` raises Python's digit-limit
``ValueError`` and ``float(Fraction(10**400))`` overflows. So the *text* is measured first
(characters, significant digits, exponent) and only then converted exactly; each quantity then has
a range (:data:`MAX_BANDWIDTH`, :data:`MAX_LATENCY`, :data:`MAX_COORDINATE`) that every later
step (floats for plotting, int64 for the flow kernels, JSON output) can hold.

Strings: ids and names must be writable to every format we write (XML 1.0 forbids control
characters and lone surrogates), so :func:`identifier` refuses them on input instead of writing
something that cannot be read back.

Every function takes ``error``, the :class:`ForestCollError` subclass its caller reports
(:class:`TopologyError` by default), and ``what``, the place named in the message.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from solver.model.errors import ForestCollError, TopologyError

MAX_NUMBER_CHARS = 64  # characters of one number's text ("1e999999999" is 11: the exponent counts)
MAX_DIGITS = 40  # significant digits of an exact number, numerator or denominator of "p/q"
MAX_EXPONENT = 40  # |decimal exponent| of an exact number after normalisation (1e40, 1e-40)
MAX_BANDWIDTH = Fraction(10**9)  # GB/s per link (1 EB/s; the fastest links today are ~1e3)
MAX_LATENCY = Fraction(10**9)  # microseconds per link (about 17 minutes)
MAX_COORDINATE = 1e9  # |x|, |y| of a node on the canvas
MAX_ID_CHARS = 256  # a node id, a name
MAX_TEXT_CHARS = 4096  # a free-text value (role, group, extra key)
#: nodes in one fabric: 131 072 GPUs of a rail-optimised cluster are about 290 000 nodes (GPU,
#: NIC, NVSwitch per host, switches); a fabric file's size is estimated before it is parsed
#: (solver.io.formats.MAX_PARSE_BYTES), so reaching these counts costs bounded memory
MAX_NODES = 524_288
MAX_LINKS = 1_048_576  # links in one fabric (the 131 072-GPU 3-tier Clos has 524 800)
MAX_NESTING = 64  # depth of JSON arrays/objects and of XML elements

_NUMBER_RE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_INT_RE = re.compile(r"[+-]?\d+")


def _fail(error: type[ForestCollError], message: str) -> ForestCollError:
    return error(message)


def _shown(value: Any, limit: int = 40) -> str:
    """``repr`` of a value cut to ``limit`` characters (messages stay one short line)."""
    try:
        text = repr(value) if not isinstance(value, Decimal) else str(value)
    except ValueError:  # an int beyond Python's 4300-digit str limit
        text = "a number of more than 4300 digits"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text.encode("ascii", "backslashreplace").decode("ascii")


def _decimal_in_bounds(dec: Decimal, what: str, error) -> Decimal:
    if not dec.is_finite():
        raise _fail(error, f"{what} must be finite, got {_shown(dec)}")
    if dec.is_zero():
        return dec
    digits = len(dec.as_tuple().digits)
    if digits > MAX_DIGITS:
        raise _fail(error, f"{what} has {digits} significant digits; at most {MAX_DIGITS} are read")
    if abs(dec.adjusted()) > MAX_EXPONENT:
        raise _fail(
            error, f"{what} is out of range: {_shown(dec)} (exponent beyond +-{MAX_EXPONENT})"
        )
    return dec


def _int_text(text: str, what: str, error) -> int:
    digits = len(text.lstrip("+-"))
    if digits > MAX_DIGITS:
        raise _fail(error, f"{what} has {digits} digits; at most {MAX_DIGITS} are read")
    return int(text)


def exact_number(
    value: Any,
    what: str,
    *,
    minimum: Fraction | int | None = None,
    maximum: Fraction | int | None = None,
    error: type[ForestCollError] = TopologyError,
) -> Fraction:
    """An exact :class:`Fraction` from a number found in a file, in bounded time.

    Accepts ints, :class:`Decimal` (from :func:`parse_json`), floats (read through their shortest
    ``repr``, so 12.5 stays 25/2) and strings: decimals (``"3.2"``, ``"1e3"``) or ratios
    (``"1/3"``). Refuses booleans, NaN, infinities, texts longer than :data:`MAX_NUMBER_CHARS`,
    more than :data:`MAX_DIGITS` significant digits, exponents beyond :data:`MAX_EXPONENT`, and
    values outside ``[minimum, maximum]`` when given.
    """
    result = _exact(value, what, error)
    if minimum is not None and result < minimum:
        raise _fail(error, f"{what} must be at least {_plain_bound(minimum)}, got {_shown(value)}")
    if maximum is not None and result > maximum:
        raise _fail(error, f"{what} must be at most {_plain_bound(maximum)}, got {_shown(value)}")
    return result


def _plain_bound(bound: Fraction | int) -> str:
    bound = Fraction(bound)
    if bound.denominator == 1 and abs(bound) >= 10**6:
        return f"{float(bound):g}"
    return str(bound)


def _exact(value: Any, what: str, error) -> Fraction:
    if isinstance(value, bool) or value is None:
        raise _fail(error, f"{what} must be a number, got {_shown(value)}")
    if isinstance(value, Fraction):
        for part in (value.numerator, value.denominator):
            if part.bit_length() > 3.33 * MAX_DIGITS:
                raise _fail(error, f"{what} is out of range (more than {MAX_DIGITS} digits)")
        return value
    if isinstance(value, int):
        if value.bit_length() > 3.33 * MAX_DIGITS:
            raise _fail(error, f"{what} is out of range (more than {MAX_DIGITS} digits)")
        return Fraction(value)
    if isinstance(value, Decimal):
        return Fraction(_decimal_in_bounds(value, what, error))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _fail(error, f"{what} must be finite, got {value}")
        return Fraction(_decimal_in_bounds(Decimal(repr(value)), what, error))
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_NUMBER_CHARS:
            raise _fail(
                error, f"{what}: number text is {len(text)} characters; at most {MAX_NUMBER_CHARS}"
            )
        if "/" in text:
            num, _, den = text.partition("/")
            num, den = num.strip(), den.strip()
            if not _INT_RE.fullmatch(num) or not _INT_RE.fullmatch(den):
                raise _fail(error, f"{what} must be a number or a ratio p/q, got {_shown(value)}")
            d = _int_text(den, what, error)
            if d == 0:
                raise _fail(error, f"{what}: ratio {_shown(value)} divides by zero")
            return Fraction(_int_text(num, what, error), d)
        if not _NUMBER_RE.fullmatch(text):
            if text.lower().lstrip("+-") in ("inf", "infinity", "nan", "snan"):
                raise _fail(error, f"{what} must be finite, got {_shown(value)}")
            raise _fail(error, f"{what} must be a number, got {_shown(value)}")
        try:
            dec = Decimal(text)
        except InvalidOperation:  # pragma: no cover - the pattern above admits only decimals
            raise _fail(error, f"{what} must be a number, got {_shown(value)}") from None
        return Fraction(_decimal_in_bounds(dec, what, error))
    raise _fail(error, f"{what} must be a number, got {type(value).__name__}")


def bounded_float(
    value: Any,
    what: str,
    *,
    limit: float = MAX_COORDINATE,
    error: type[ForestCollError] = TopologyError,
) -> float:
    """A finite float with ``|value| <= limit`` (coordinates, measured times...)."""
    if type(value) is int and -limit <= value <= limit:  # the common cases without a Fraction
        return float(value)
    if isinstance(value, Decimal):
        dec = _decimal_in_bounds(value, what, error)
        if dec.copy_abs() > limit:
            raise _fail(
                error, f"{what} must be between -{limit:g} and {limit:g}, got {_shown(value)}"
            )
        return float(dec)
    exact = exact_number(value, what, error=error)
    if abs(exact) > limit:
        raise _fail(error, f"{what} must be between -{limit:g} and {limit:g}, got {_shown(value)}")
    return float(exact)


def bounded_int(
    value: Any,
    what: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    base: int = 10,
    error: type[ForestCollError] = TopologyError,
) -> int:
    """An int from an int or its text (``base`` 10, or 0 for ``0x..`` too), within bounds.

    The text is measured before conversion (no digit-limit ``ValueError`` from Python, no huge
    integers); the message names the bound that was hit.
    """
    if isinstance(value, bool):
        raise _fail(error, f"{what} must be a whole number, got {_shown(value)}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_NUMBER_CHARS:
            raise _fail(
                error, f"{what}: number text is {len(text)} characters; at most {MAX_NUMBER_CHARS}"
            )
        try:
            number = int(text, base)
        except ValueError:
            raise _fail(error, f"{what} must be a whole number, got {_shown(value)}") from None
    elif isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        if abs(value.adjusted()) > MAX_EXPONENT:
            raise _fail(error, f"{what} is out of range: {_shown(value)}")
        number = int(value)
    else:
        raise _fail(error, f"{what} must be a whole number, got {_shown(value)}")
    if minimum is not None and number < minimum:
        raise _fail(error, f"{what} must be at least {minimum}, got {_shown(number)}")
    if maximum is not None and number > maximum:
        raise _fail(error, f"{what} must be at most {maximum}, got {_shown(number)}")
    return number


def _bad_char(text: str) -> str | None:
    """The first character no XML 1.0 file can hold (controls, lone surrogates, U+FFFE/FFFF)."""
    for ch in text:
        code = ord(ch)
        if code < 0x20 and ch not in "\t\n\r":
            return ch
        if 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
            return ch
    return None


_BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A)) | {0x200E, 0x200F}


def printable(text: str) -> str:
    """``text`` safe to print on a terminal as (part of) one line: control characters (newline,
    tab and escape included), DEL and C1 controls, bidirectional overrides, lone surrogates and
    U+FFFE/U+FFFF become Python escapes (``\\x1b``, ``\\n``, ``\\u202e``); everything else is kept."""
    if text.isprintable() and not any(ord(ch) in _BIDI for ch in text):
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if (
            code < 0x20
            or 0x7F <= code <= 0x9F
            or 0xD800 <= code <= 0xDFFF
            or code in (0xFFFE, 0xFFFF)
            or code in _BIDI
            or not ch.isprintable()
            and ch != " "
        ):
            out.append(
                ch.encode("unicode_escape", "backslashreplace").decode("ascii")
                if code < 0xD800 or code > 0xDFFF
                else f"\\u{code:04x}"
            )
        else:
            out.append(ch)
    return "".join(out)


def text_value(
    value: Any,
    what: str,
    *,
    max_chars: int = MAX_TEXT_CHARS,
    error: type[ForestCollError] = TopologyError,
) -> str:
    """A string that every output format can write back: bounded length, no control characters
    (tab and newline allowed), no lone surrogates."""
    if not isinstance(value, str):
        raise _fail(error, f"{what} must be a string, got {_shown(value)}")
    if len(value) > max_chars:
        raise _fail(error, f"{what} is {len(value)} characters long; at most {max_chars}")
    bad = _bad_char(value)
    if bad is not None:
        raise _fail(error, f"{what} contains the control character or surrogate U+{ord(bad):04X}")
    return value


def identifier(
    value: Any,
    what: str,
    *,
    max_chars: int = MAX_ID_CHARS,
    error: type[ForestCollError] = TopologyError,
) -> str:
    """A node id or name: non-empty, at most ``max_chars``, no control characters (not even tab
    or newline) or lone surrogates."""
    if not isinstance(value, str) or not value:
        raise _fail(error, f"{what} must be a non-empty string, got {_shown(value)}")
    text_value(value, what, max_chars=max_chars, error=error)
    for ch in "\t\n\r":
        if ch in value:
            raise _fail(error, f"{what} contains the control character U+{ord(ch):04X}")
    return value


def check_count(count: int, limit: int, what: str, error: type[ForestCollError] = TopologyError):
    """Refuse a file that asks for more than ``limit`` items before anything is allocated."""
    if count > limit:
        raise _fail(error, f"{what}: {count} is more than the limit of {limit}")
