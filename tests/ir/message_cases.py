"""Helpers of the verifier's message tables (tests/ir/test_stablehlo_*.py): a case's op in a
function, and the first error our parser and verifier (or the oracle) give for a text."""
from __future__ import annotations

import re

from shardy_ref.ir.diagnostics import ParseError, VerifyError
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module


def wrap(args: str, op_line: str) -> str:
    return f"func.func @main({args}) {{\n  {op_line}\n  return\n}}\n"


def first_error(text: str) -> str | None:
    try:
        verify_module(parse_module(text, "-"))
    except (VerifyError, ParseError) as e:
        return e.message
    return None


def oracle_first_error(err: str) -> str | None:
    """The message of the oracle's first ``error:`` line (its location dropped)."""
    for line in err.splitlines():
        m = re.search(r'error: (?:"-":\d+:\d+: )?(.*)', line)
        if m and "Unable to parse" not in line:
            return m.group(1)
    return None
