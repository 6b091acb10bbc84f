"""Run passes on MLIR text the way ``shardy-ref-opt`` does, for the pass unit tests and
the properties every pass must have (output verifies; idempotent where upstream is)."""
from __future__ import annotations

from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module, print_module
from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline


def run_pipeline(text: str, pipeline: str, ctx: PassContext | None = None) -> str:
    """Parse ``text``, verify, run ``pipeline`` (``"sdy-foo{a=1},sdy-bar"``), verifying after
    every pass as mlir-opt does, and print the result."""
    module = parse_module(text, "test.mlir")
    verify_module(module)
    PassManager(parse_pipeline(pipeline), verify=verify_module).run(
        module, ctx if ctx is not None else PassContext())
    return print_module(module)


def assert_idempotent(text: str, pipeline: str) -> str:
    """Running ``pipeline`` on its own output changes nothing; returns the output."""
    once = run_pipeline(text, pipeline)
    twice = run_pipeline(once, pipeline)
    assert twice == once, f"not idempotent:\n--- once\n{once}\n--- twice\n{twice}"
    return once
