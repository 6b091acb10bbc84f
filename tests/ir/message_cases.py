"""Helpers of the verifier's message tables (tests/ir/test_stablehlo_*.py): a case's op in a
function, and the first error our parser and verifier give for a text."""
from __future__ import annotations

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
