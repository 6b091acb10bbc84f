"""Argument types for the commands' parsers: a value out of range is a usage error that
names the flag (``argparse`` exits 2 with ``argument --seed: ...``), never a traceback
later on."""
from __future__ import annotations

import argparse
import math


def _number(text: str, convert, what: str):
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    value = _number(text, int, "an integer >= 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def positive_int(text: str) -> int:
    value = _number(text, int, "an integer >= 1")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    value = _number(text, float, "a finite number >= 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def percentage(text: str) -> float:
    value = _number(text, float, "a percentage 0 .. 100")
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"expected a percentage 0 .. 100, got {text!r}")
    return value
