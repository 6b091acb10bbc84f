"""MLIR text in and out: ``parse_module`` (Lark LALR grammar) and ``print_module``."""
from shardy_ref.parser.printer import print_module
from shardy_ref.parser.reader import parse_module

__all__ = ["parse_module", "print_module"]
