"""``canonicalize``: MLIR's canonicalizer (``mlir/lib/Transforms/Canonicalizer.cpp``).

Collects every registered op's canonicalization patterns (ops in name order, as MLIR's
``getRegisteredOperations`` lists them; each op's patterns in ``results.add`` order) and runs
them with the greedy driver over the anchor op's regions, with the pass options' config
(defaults: top-down, folding, constant CSE, region simplification, 10 iterations).
Canonicalization is best effort: not converging is no failure unless ``test-convergence``.
``region-simplify=aggressive`` runs as ``normal`` (dead-code elimination, no block merging).
See https://mlir.llvm.org/docs/Passes/#-canonicalize.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.pattern_match import CANONICALIZATION_PATTERNS, filter_patterns
from shardy_ref.pass_manager import Pass, register_pass
from shardy_ref.transforms.greedy import GreedyRewriteConfig, apply_patterns_greedily

# modules registering canonicalization patterns (imported on first use)
PATTERN_MODULES = ("shardy_ref.ir.sdy_canonicalization",)


def canonicalization_patterns(disabled=(), enabled=()) -> list:
    """All registered ops' canonicalization patterns, filtered by name or label."""
    for module in PATTERN_MODULES:
        importlib.import_module(module)
    patterns = [p for op_name in sorted(CANONICALIZATION_PATTERNS)
                for p in CANONICALIZATION_PATTERNS[op_name]]
    return filter_patterns(patterns, disabled, enabled)


@register_pass
@dataclass(frozen=True, slots=True)
class CanonicalizerPass(Pass):
    """Canonicalize operations (MLIR ``-canonicalize``; options as upstream's)."""

    NAME = "canonicalize"
    ANCHOR = "any"
    top_down: bool = field(
        default=True, metadata={"help": "Seed the worklist in general top-down order"})
    region_simplify: str = field(default="normal", metadata={"help": (
        "Perform control flow optimizations to the region tree; aggressive runs as normal")})
    max_iterations: int = field(default=10, metadata={"help": (
        "Max. iterations between applying patterns / simplifying regions")})
    max_num_rewrites: int = field(default=-1, metadata={"help": (
        "Max. number of pattern rewrites within an iteration, -1 for no limit")})
    test_convergence: bool = field(default=False, metadata={"help": (
        "Test only: Fail pass on non-convergence to detect cyclic pattern")})
    disable_patterns: tuple[str, ...] = field(default=(), metadata={"help": (
        "Labels of patterns that should be filtered out during application")})
    enable_patterns: tuple[str, ...] = field(default=(), metadata={"help": (
        "Labels of patterns that should be used during application; all others are filtered out")})

    def run(self, op, ctx) -> None:
        config = GreedyRewriteConfig(
            use_top_down_traversal=self.top_down, max_iterations=self.max_iterations,
            max_num_rewrites=self.max_num_rewrites,
            region_simplification="disabled" if self.region_simplify == "disabled"
            else "normal")
        patterns = canonicalization_patterns(self.disable_patterns, self.enable_patterns)
        result = apply_patterns_greedily(op, patterns, config, ctx.diagnostics)
        if self.test_convergence and not result.converged:
            raise PassError(op.location, "Canonicalizer failed to converge")
