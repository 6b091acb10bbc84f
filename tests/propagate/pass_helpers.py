"""Run passes on MLIR text the way ``shardy-ref-opt`` does, for the pass unit tests and
the properties every pass must have (output verifies; idempotent where upstream is)."""
from __future__ import annotations

from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module, print_module
from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline


def run_pipeline(text: str, pipeline: str, ctx: PassContext | None = None, *,
                 allow_unregistered: bool = False) -> str:
    """Parse ``text``, verify, run ``pipeline`` (``"sdy-foo{a=1},sdy-bar"``), verifying after
    every pass as mlir-opt does, and print the result. ``allow_unregistered`` is mlir-opt's
    ``-allow-unregistered-dialect``."""
    module = parse_module(text, "test.mlir", allow_unregistered=allow_unregistered)
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


def examples(strategy, n: int = 40) -> list:
    """``n`` reproducible examples of a hypothesis strategy, for differential tests that
    send them to the oracle in one batch."""
    from hypothesis import given, settings

    out = []

    @settings(max_examples=n, deadline=None, derandomize=True, database=None)
    @given(strategy)
    def collect(example):
        out.append(example)

    collect()
    return out


def assert_like_oracle(texts: list[str], pipeline: str) -> None:
    """Our output of ``pipeline`` on each text equals real Shardy's (``tools/corpus.py``
    runs the oracle in one batch and caches its answers)."""
    import corpus

    refs = corpus.oracle_print([(t, False) for t in texts],
                               pipeline=f"builtin.module({pipeline})")
    for text, ref in zip(texts, refs):
        assert ref["ok"], ref["err"]
        assert run_pipeline(text, pipeline) == ref["out"], text
