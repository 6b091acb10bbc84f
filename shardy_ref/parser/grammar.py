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


def _opaque_body_regex(depth: int = 4) -> str:
    """``<...>`` with balanced angle brackets (``->`` does not close), strings kept whole."""
    string = r'"(?:[^"\\\n]|\\.)*"'
    inner = rf"<(?:->|[^<>\"]|{string})*>"
    for _ in range(depth):
        inner = rf"<(?:->|[^<>\"]|{string}|{inner})*>"
    return inner


def terminal(name: str, alternatives: list[str], priority: int = 5) -> str:
    """A Lark regex terminal matching any of the given op names as a whole word."""
    alts = "|".join(re.escape(a) for a in sorted(alternatives, key=len, reverse=True))
    return f"{name}.{priority}: /(?:{alts}){_IDENT_TAIL}/"


@cache
def grammar_text() -> str:
    from shardy_ref.parser import syntax

    parts = [(HERE / f"{name}.lark").read_text() for name in ("core", "sdy", "stablehlo")]
    text = "\n".join(parts)
    op_terminals = "\n".join(terminal(name, names) for name, names in syntax.OP_TERMINALS.items())
    # Any other stablehlo op name: cheaper to lex than an alternation of a hundred names;
    # the builder checks the op has the common pretty shape (FORMATS).
    op_terminals += f"\nSHLO_PRETTY.4: /stablehlo\\.[a-z_]+{_IDENT_TAIL}/"
    return (text.replace("{{CUSTOM_OPS}}", "".join(f" | {r}" for r in syntax.CUSTOM_OP_RULES))
            .replace("{{DIALECT_ATTRS}}", " | ".join(syntax.DIALECT_ATTR_RULES))
            .replace("{{OPAQUE_BODY}}", "/" + _opaque_body_regex() + "/")
            .replace("{{OP_TERMINALS}}", op_terminals))
