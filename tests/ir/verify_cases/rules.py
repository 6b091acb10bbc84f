"""Verifier cases for op sharding rules (spec 003 §3.13 OSR-*, §3.17 TMAP-*, §3.6 DIMMAP-*).

Each case puts a ``sdy.sharding_rule`` on a ``stablehlo.custom_call``; the invalid rule
differs from the valid one only in the broken rule. Messages come from upstream
(``sharding_rule_verification.mlir`` diagnostics of the oracle, ``verifiers.cc``).
"""
from __future__ import annotations

from tests.ir.verify_cases import RuleCase


def _call(operands: list[str], results: list[str], rule: str) -> str:
    """A function applying ``@foo`` with sharding rule ``rule`` to arguments of types
    ``operands`` and returning its results of types ``results``."""
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(operands))
    values = ", ".join(f"%arg{i}" for i in range(len(operands)))
    ins = ", ".join(operands)
    outs = ", ".join(results)
    lhs = "%0 = " if len(results) == 1 else f"%0:{len(results)} = " if results else ""
    returned = ("%0" if len(results) == 1 else
                ", ".join(f"%0#{i}" for i in range(len(results))))
    ret = f"return {returned} : {outs}" if results else "return"
    return (f"func.func @f({args}) -> ({outs}) {{\n"
            f"  {lhs}stablehlo.custom_call @foo({values}) "
            f"{{sdy.sharding_rule = #sdy.op_sharding_rule<{rule}>}} : ({ins}) -> ({outs})\n"
            f"  {ret}\n}}\n")


T8 = "tensor<8xf32>"
T2x4x8 = "tensor<2x4x8xf32>"
T2x8 = "tensor<2x8xf32>"


def _reduce(rule_tail: str) -> str:
    """``tensor<2x4x8>`` reduced over its middle dimension."""
    return _call([T2x4x8], [T2x8], f"([i, j, k])->([i, k]) {{i=2, j=4, k=8}}{rule_tail}")


CASES = {
    "OSR-1": RuleCase(
        valid=_call([T8, T8], [T8], "([i], [i])->([i]) {i=8}"),
        invalid=_call([T8, T8], [T8], "([i])->([i]) {i=8}"),
        message="number of operands and mappings must match: 2 != 1"),
    # upstream's parser rejects `()` ("expected '['"), so text never reaches the verifier's
    # message ("number of operands mappings cannot be 0. ..."), which guards rules built in
    # memory; tests/ir/test_verify_rules_props.py checks that message
    "OSR-2": RuleCase(
        valid=_call([T8], [T8], "([i])->([i]) {i=8}"),
        invalid=_call([], [T8], "()->([i]) {i=8}"),
        message="expected '['"),
    "OSR-3": RuleCase(
        valid=_call(["tensor<2x4xf32>"] * 2, ["tensor<2x4xf32>"],
                    "([i, j], [i, j])->([i, j]) {i=2, j=4}"),
        invalid=_call(["tensor<2x4xf32>"] * 2, ["tensor<2x4xf32>"],
                      "([i, j], [i])->([i, j]) {i=2, j=4}"),
        message="operand 1 - mapping rank must match: 1 != 2"),
    "OSR-4": RuleCase(
        valid=_reduce(" need_replication={k}"),
        invalid=_reduce(" need_replication={z}"),
        message="index must be less than 3, got: 17"),
    "OSR-5": RuleCase(
        valid=_reduce(" reduction={j} permutation={k}"),
        invalid=_reduce(" reduction={j} need_replication={j}"),
        message="a factor can only be in one of the reduction, need replication, or "
                "permutation factor sets"),
    "TMAP-1": RuleCase(
        valid=_call([T8, T8], [T8, T8], "([i], [i])->([i], [ij]) {i=8, j=2}"),
        invalid=_call([T8, T8], [T8, T8], "([i], [i])->([i], [ij]) {i=8, j=1}"),
        message="result 1 - dim mapping can't have a factor of size 1 if there are "
                "multiple factors"),
    "TMAP-2": RuleCase(
        valid=_call(["tensor<2x2xf32>"], ["tensor<4xf32>"], "([i, j])->([ij]) {i=2, j=2}"),
        invalid=_call(["tensor<2x2xf32>"], ["tensor<4xf32>"], "([i, i])->([ij]) {i=2, j=2}"),
        message="operand - cannot reuse factors for the same tensor value"),
    # upstream parses the missing factor of `[i,]` as an empty dim mapping
    "DIMMAP-1": RuleCase(
        valid=_call([T2x8, T2x8], [T2x8], "([i, j], [i, j])->([i, j]) {i=2, j=8}"),
        invalid=_call([T2x8, T2x8], [T2x8], "([i, j], [i,])->([i, j]) {i=2, j=8}"),
        message="operand 1 - dim mapping must have at least one factor"),
    "DIMMAP-2": RuleCase(
        valid=_call([T2x8, T2x8], [T2x8], "([i, j], [i, j])->([i, j]) {i=2, j=8}"),
        invalid=_call([T2x8, T2x8], [T2x8], "([i, u], [i, j])->([i, j]) {i=2, j=8}"),
        message="operand 0 - expecting factor indices to be within 0<=...<num_factors; "
                "received: 12, num_factors: 2"),
    "DIMMAP-3": RuleCase(
        valid=_call([T2x8, T2x8], [T2x8], "([i, jk], [i, jk])->([i, jk]) {i=2, j=4, k=2}"),
        invalid=_call([T2x8, T2x8], [T2x8], "([i, jk], [i, j])->([i, j]) {i=2, j=8, k=1}"),
        message="operand 0 - dim mapping can't have a factor of size 1 if there are "
                "multiple factors"),
    "DIMMAP-4": RuleCase(
        valid=_call(["tensor<4x2xf32>"], [T8], "([ij, k])->([ijk]) {i=2, j=2, k=2}"),
        invalid=_call(["tensor<4x2xf32>"], [T8], "([ij, k])->([iik]) {i=2, j=2, k=2}"),
        message="result - cannot reuse factors for the same tensor value"),
}
