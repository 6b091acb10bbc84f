"""The sharding rule of ``stablehlo.reshape``: the gcd walk ("Compound factors: extending
the rule for reshapes" in https://openxla.org/shardy/propagation).

Input and output dimensions are walked together, major to minor. While the products of
the factors added so far agree, the gcd of the next input and output sizes still to cover
becomes a factor shared by both; when they diverge, each side gets its own factors until
the products meet again. Size-1 dimensions get their own size-1 factor. A dimension may so
be made of several factors (compound factors). See upstream ``op_sharding_rule_registry.cc``.
"""
from __future__ import annotations

import math

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.propagate.rules.builder import NULL_DIM, OpShardingRuleBuilder, tensor_shape
from shardy_ref.propagate.rules.registry import rule


def _next_factor_if_diverged(next_factor: int, gcd: int, smaller: int, larger: int) -> int:
    """The factor to add to the side whose factor product ``smaller`` is behind ``larger``:
    one that makes the products converge if possible, else one that keeps ``gcd`` for the
    next step, else all of ``next_factor``."""
    if larger % smaller == 0 and next_factor % (larger // smaller) == 0:
        return larger // smaller
    if next_factor > gcd:
        return next_factor // gcd
    return next_factor


class _ReshapeWalk:
    """The state of upstream's loop: current dims, the products of the dimension sizes
    covered so far, and the products of the factors added so far, per side."""

    def __init__(self, in_shape: tuple[int, ...], out_shape: tuple[int, ...],
                 builder: OpShardingRuleBuilder):
        self.in_shape, self.out_shape, self.builder = in_shape, out_shape, builder
        self.in_dim = self.out_dim = 0
        self.dims_in = self.dims_out = 1
        self.factors_in = self.factors_out = 1

    def add_in(self, size: int) -> None:
        self.builder.add_factor(self.in_dim, NULL_DIM, size)
        self.factors_in *= size

    def add_out(self, size: int) -> None:
        self.builder.add_factor(NULL_DIM, self.out_dim, size)
        self.factors_out *= size

    def step(self) -> None:
        in_rank, out_rank = len(self.in_shape), len(self.out_shape)
        if self.in_dim < in_rank and self.in_shape[self.in_dim] == 1:
            self.builder.add_factor(self.in_dim, NULL_DIM, 1)
            self.in_dim += 1
            return
        if self.out_dim < out_rank and self.out_shape[self.out_dim] == 1:
            self.builder.add_factor(NULL_DIM, self.out_dim, 1)
            self.out_dim += 1
            return
        if self.in_dim < in_rank and self.dims_in == self.factors_in:
            self.dims_in *= self.in_shape[self.in_dim]
        if self.out_dim < out_rank and self.dims_out == self.factors_out:
            self.dims_out *= self.out_shape[self.out_dim]
        next_in = self.dims_in // self.factors_in
        next_out = self.dims_out // self.factors_out
        gcd = math.gcd(next_in, next_out)
        if self.factors_in == self.factors_out:
            if gcd > 1:
                self.builder.add_factor(self.in_dim, self.out_dim, gcd)
                self.factors_in *= gcd
                self.factors_out *= gcd
            else:
                self.add_in(next_in)
                self.add_out(next_out)
        elif self.factors_in < self.factors_out:
            self.add_in(_next_factor_if_diverged(next_in, gcd, self.factors_in,
                                                 self.factors_out))
        else:
            self.add_out(_next_factor_if_diverged(next_out, gcd, self.factors_out,
                                                  self.factors_in))
        if self.in_dim < in_rank and self.dims_in == self.factors_in:
            self.in_dim += 1
        if self.out_dim < out_rank and self.dims_out == self.factors_out:
            self.out_dim += 1

    def run(self) -> None:
        while self.in_dim < len(self.in_shape) or self.out_dim < len(self.out_shape):
            self.step()


@rule("stablehlo.reshape", op_local=True)
def reshape_rule(op: Operation, _conservative: bool) -> OpShardingRule | None:
    """The gcd walk; no rule when the tensor has no elements (the walk cannot handle a
    size-0 dimension, and there is nothing to propagate)."""
    in_shape = tensor_shape(op.operand_types[0])
    out_shape = tensor_shape(op.result_types[0])
    if math.prod(in_shape) == 0:
        return None
    builder = OpShardingRuleBuilder.for_op(op)
    _ReshapeWalk(in_shape, out_shape, builder).run()
    return builder.build()
