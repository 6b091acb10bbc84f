"""Argument types for the commands' parsers: a value out of range is a usage error that
names the flag (``argparse`` exits 2 with ``argument --seed: ...``), never a traceback
later on."""
from __future__ import annotations

import argparse
import math


def _number(text: str, convert, what: str, low: float, high: float = math.inf):
    """``text`` converted and within ``[low, high]`` (finite), else a usage error that says
    ``what`` was expected."""
    try:
        value = convert(text)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or not low <= value <= high:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    return _number(text, int, "an integer >= 0", 0)


def positive_int(text: str) -> int:
    return _number(text, int, "an integer >= 1", 1)


def non_negative_float(text: str) -> float:
    return _number(text, float, "a finite number >= 0", 0)


def percentage(text: str) -> float:
    return _number(text, float, "a percentage 0 .. 100", 0, 100)


_SCALES = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def byte_size(text: str) -> int:
    """A number of bytes >= 0, with an optional suffix K, M or G (``1.5G``)."""
    scale = _SCALES.get(text[-1:].upper(), 1)
    try:
        number = float(text[:-1] if scale > 1 else text) * scale
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number >= 0):  # inf, nan, 1e300G, -1
        raise argparse.ArgumentTypeError(f"expected a size in bytes >= 0 (suffixes K, M, "
                                         f"G), got {text!r}")
    return int(number)
