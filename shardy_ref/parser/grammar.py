"""Assemble the Lark grammar from the per-dialect ``.lark`` files and the op-name tables.

Op names become lexer terminals (``OP_SDY_RESHARD: /sdy\\.reshard(?![\\w$.])/``) so that a
pretty op is recognised by its name; the tables live in :mod:`shardy_ref.parser.syntax`,
next to the printer that writes the same syntax back.
"""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

HERE = Path(__file__).parent
_IDENT_TAIL = r"(?![a-zA-Z0-9_$.])"


_STRING = r'"(?:[^"\\\n]|\\.)*"'


def _opaque_body_regex(depth: int = 4) -> str:
    """``<...>`` with balanced angle brackets, strings kept whole; ``->`` never closes
    one (a ``-`` can only match as part of it when a ``>`` follows)."""
    inner = rf"<(?:->|-(?!>)|[^<>\"\-]|{_STRING})*>"
    for _ in range(depth):
        inner = rf"<(?:->|-(?!>)|[^<>\"\-]|{_STRING}|{inner})*>"
    return inner


def _bracket_body_regex(open_: str, close: str, depth: int = 6) -> str:
    """``[...]`` or ``{...}`` with that bracket balanced, strings kept whole: the extent of
    a stripped sdy attribute in op syntax (its parser then reads it token by token). No
    ``%`` outside strings: a body that would run on into SSA values is not one."""
    o, c = re.escape(open_), re.escape(close)
    inner = rf"{o}(?:[^{o}{c}\"%]|{_STRING})*{c}"
    for _ in range(depth):
        inner = rf"{o}(?:[^{o}{c}\"%]|{_STRING}|{inner})*{c}"
    return inner


def terminal(name: str, alternatives: list[str], priority: int = 5) -> str:
    """A Lark regex terminal matching any of the given op names as a whole word."""
    alts = "|".join(re.escape(a) for a in sorted(alternatives, key=len, reverse=True))
    return f"{name}.{priority}: /(?:{alts}){_IDENT_TAIL}/"


@cache
def grammar_text() -> str:
    from shardy_ref.parser import syntax

    parts = [(HERE / f"{name}.lark").read_text()
             for name in ("core", "sdy", "stablehlo", "arith", "check", "chlo")]
    text = "\n".join(parts)
    op_terminals = "\n".join(terminal(name, names) for name, names in syntax.OP_TERMINALS.items())
    # Any other stablehlo op name: cheaper to lex than an alternation of a hundred names;
    # the builder checks the op has the common pretty shape (FORMATS).
    op_terminals += f"\nSHLO_PRETTY.4: /stablehlo\\.[a-z_][a-z0-9_]*{_IDENT_TAIL}/"
    return (text.replace("{{CUSTOM_OPS}}", "".join(f" | {r}" for r in syntax.CUSTOM_OP_RULES))
            .replace("{{OPAQUE_BODY}}", "/" + _opaque_body_regex() + "/")
            .replace("{{SQUARE_BODY}}", "/" + _bracket_body_regex("[", "]") + "/")
            .replace("{{CURLY_BODY}}", "/" + _bracket_body_regex("{", "}") + "/")
            .replace("{{OP_TERMINALS}}", op_terminals))
