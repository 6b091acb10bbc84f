"""Errors of running a program: a located, readable message, never a Python traceback."""
from __future__ import annotations

from shardy_ref.ir.diagnostics import ShardyRefError


class InterpreterError(ShardyRefError):
    """A program cannot run (unsupported op, bad input, a value out of the spec's domain)."""


class CheckFailure(InterpreterError):
    """A ``check.expect_*`` op found a value different from the expected one."""
