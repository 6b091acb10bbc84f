"""MLIR text in and out: ``parse_module`` (Lark LALR grammar) and ``print_module``."""
from shardy_ref.parser.printer import print_module
from shardy_ref.parser.reader import parse_attribute, parse_module, parse_type

__all__ = ["parse_attribute", "parse_module", "parse_type", "print_module"]
