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
