"""Documents from files we did not write, parsed in bounded depth and size: JSON
(:func:`parse_json`, :func:`json_value`) and XML (:func:`parse_xml`, no entity declarations).

The numbers and strings inside them are read by :mod:`solver.model.values`.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from decimal import Decimal
from typing import Any

from solver.model.errors import ForestCollError, TopologyError
from solver.model.values import (
    MAX_NESTING,
    MAX_NUMBER_CHARS,
    _fail,
    _shown,
    text_value,
)

# --------------------------------------------------------------------------------- JSON


def _parse_float(text: str) -> Decimal:
    if len(text) > MAX_NUMBER_CHARS:
        raise _NumberTooLong(text)
    return Decimal(text)


def _parse_int(text: str) -> int | Decimal:
    if len(text) > MAX_NUMBER_CHARS:
        raise _NumberTooLong(text)
    return int(text)


def _parse_constant(text: str) -> Decimal:
    return Decimal(text)  # NaN, Infinity: refused where a number is read (exact_number, json_value)


class _NumberTooLong(Exception):
    pass


def parse_json(
    text: str,
    where: str,
    *,
    max_depth: int = MAX_NESTING,
    error: type[ForestCollError] = TopologyError,
) -> Any:
    """``json.loads`` for untrusted text: decimals stay :class:`Decimal` (exact), numbers are at
    most :data:`MAX_NUMBER_CHARS` characters (``NaN``/``Infinity`` become Decimals that every
    reader of numbers refuses), and nesting is at
    most ``max_depth`` levels. Errors name ``where`` (and line:column for syntax errors)."""
    try:
        data = json.loads(
            text,
            parse_float=_parse_float,
            parse_int=_parse_int,
            parse_constant=_parse_constant,
        )
    except json.JSONDecodeError as exc:
        raise _fail(error, f"{where}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except _NumberTooLong as exc:
        raise _fail(
            error,
            f"{where}: a number is {len(exc.args[0])} characters long; at most {MAX_NUMBER_CHARS}",
        ) from None
    except RecursionError:
        raise _fail(error, f"{where}: JSON nested more than {max_depth} levels deep") from None
    depth = nesting_depth(data, max_depth + 1)
    if depth > max_depth:
        raise _fail(error, f"{where}: JSON nested more than {max_depth} levels deep")
    return data


_NESTED = (dict, list, tuple)


def nesting_depth(value: Any, stop: int) -> int:
    """Depth of nested lists/dicts in ``value`` (a scalar is 0), counting no further than ``stop``.

    Iterative, so any depth is measured without recursion.
    """
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest >= stop:
            return deepest
        below = depth + 1
        stack += [(child, below) for child in children if isinstance(child, _NESTED)]
    return deepest


def json_value(value: Any, what: str, error: type[ForestCollError] = TopologyError) -> Any:
    """A parsed JSON value with :class:`Decimal` turned into int/float for keeping as-is.

    Unknown keys of a file are kept for the round trip; this makes sure they can be written back
    (finite numbers, strings without lone surrogates), recursively (depth is bounded by
    :func:`parse_json`).
    """
    if isinstance(value, Decimal):
        number = float(value)
        if not math.isfinite(number):
            raise _fail(error, f"{what}: {_shown(value)} is out of range")
        return number
    if isinstance(value, float) and not math.isfinite(value):
        raise _fail(error, f"{what}: {value} is out of range")
    if isinstance(value, str):
        return text_value(value, what, max_chars=len(value) + 1, error=error) if value else value
    if isinstance(value, dict):
        return {
            text_value(k, f"{what}: key", error=error): json_value(v, f"{what}.{k}", error)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [json_value(v, what, error) for v in value]
    return value


# --------------------------------------------------------------------------------- XML


def parse_xml(
    text: str,
    where: str,
    *,
    max_depth: int = MAX_NESTING,
    error: type[ForestCollError] = TopologyError,
) -> ET.Element:
    """Parse untrusted XML text: no DTD entity declarations (no entity expansion bombs), at most
    ``max_depth`` levels of elements (the readers walk trees recursively)."""
    head = text[:65536]
    if "<!ENTITY" in head or "<!ENTITY" in text:
        raise _fail(error, f"{where}: XML entity declarations (<!ENTITY) are not accepted")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line, col = exc.position
        message = str(exc).split(":")[0]
        raise _fail(error, f"{where}:{line}:{col + 1}: invalid XML: {message}") from None
    depth = 0
    stack = [(root, 1)]
    while stack:
        elem, d = stack.pop()
        if d > max_depth:
            raise _fail(error, f"{where}: XML nested more than {max_depth} elements deep")
        depth = max(depth, d)
        stack.extend((child, d + 1) for child in elem)
    return root


__all__ = ["json_value", "nesting_depth", "parse_json", "parse_xml"]
