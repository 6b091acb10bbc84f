"""Build ops from MLIR text and print the sharding rules the registry gives them, for the
op-sharding-rule tests (helpers, not tests)."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module
from shardy_ref.propagate.rules import create_op_sharding_rule


def func_ops(text: str) -> list:
    """The ops of the first function in ``text`` (a module or a bare ``func.func``),
    terminator excluded, after parsing and verifying."""
    module = parse_module(text, "test.mlir")
    verify_module(module)
    func = next(op for op in module.walk() if op.name == "func.func")
    return [op for op in func.regions[0].blocks[0] if op.name != "func.return"]


def rule_of(text: str, conservative: bool = False, index: int = -1) -> str | None:
    """The printed rule (``([i])->([i]) {i=8}``) of op ``index`` of the function in
    ``text`` (its last op by default), or ``None`` when the registry gives none."""
    op = func_ops(text)[index]
    rule = create_op_sharding_rule(op, conservative)
    return None if rule is None else rule.params()[1:-1]


def single_op(op_text: str, args: list[str], results: list[str]) -> str:
    """A function with arguments of types ``args`` returning the result(s) of ``op_text``
    (which names its results ``%0``, or ``%0:N``) of types ``results``."""
    params = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(args))
    if len(results) == 1:
        rets = "%0"
    else:
        rets = ", ".join(f"%0#{i}" for i in range(len(results)))
    types = ", ".join(results)
    return (f"func.func @f({params}) -> ({types}) {{\n  {op_text}\n"
            f"  return {rets} : {types}\n}}\n")


def oracle_rules(texts: list[str], conservative: bool = False) -> list[list[str | None]]:
    """Per text, the rules upstream's ``sdy-populate-op-sharding-rules`` puts on the ops of
    its function (``None`` for an op it leaves without), via the oracle (tests marked
    ``oracle``)."""
    import corpus

    option = "{conservative-propagation=true}" if conservative else ""
    pipeline = f"builtin.module(func.func(sdy-populate-op-sharding-rules{option}))"
    results = corpus.oracle_print([(t, False) for t in texts], pipeline=pipeline)
    out = []
    for res in results:
        assert res["ok"], res["err"]
        out.append([_printed_rule(op) for op in func_ops(res["out"])])
    return out


def _printed_rule(op) -> str | None:
    rule = op.attributes.get("sdy.sharding_rule")
    return None if rule is None else rule.params()[1:-1]


def our_rules(text: str, conservative: bool = False) -> list[str | None]:
    """Per op of the function in ``text``, the rule the registry gives it."""
    out = []
    for op in func_ops(text):
        rule = create_op_sharding_rule(op, conservative)
        out.append(None if rule is None else rule.params()[1:-1])
    return out


@dataclass(frozen=True)
class RuleCase:
    """One op (the last of the function in ``text``) and the rule it must get."""

    name: str
    text: str
    expected: str | None
    conservative: bool = False


def case(name: str, op_text: str, args: list[str], results: list[str],
         expected: str | None, conservative: bool = False) -> RuleCase:
    return RuleCase(name, single_op(op_text, args, results), expected, conservative)


def check_case(c: RuleCase) -> None:
    assert rule_of(c.text, c.conservative) == c.expected
