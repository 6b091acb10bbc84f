"""Greedy shrinking of a program two tools disagree on, for ``shardy-ref diff``.

Each round lists the one-step simplifications of the current program (delete an op whose
results only the ``return`` uses, with those function results; drop a function result;
drop a sharding constraint, an argument's or a result's user sharding; delete an unused
argument), asks
``still_disagrees`` which of them keep the disagreement (all at once, so the other tool
runs them in one batch) and continues from the first that does, until none does.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

from shardy_ref.ir.func_attrs import (
    attr_dicts,
    function_type,
    get_arg_attr,
    get_result_attr,
    set_arg_attr,
    set_attr_dicts,
    set_function_type,
    set_result_attr,
)
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import FunctionType
from shardy_ref.parser import parse_module, print_module

Edit = Callable[[Operation], None]  # applied to a freshly parsed copy of the program
MAX_ROUNDS = 100


def _funcs(module: Operation) -> list[Operation]:
    return [op for op in module.regions[0].blocks[0] if op.name == "func.func"]


def _body_ops(func: Operation) -> list[Operation]:
    return list(func.regions[0].blocks[0])


def _drop_func_results(func: Operation, indices: set[int]) -> None:
    """Remove results ``indices`` of ``func``: return operands, types and attributes."""
    dicts = attr_dicts(func, "result")
    ftype = function_type(func)
    keep = [i for i in range(len(ftype.results)) if i not in indices]
    ret = _body_ops(func)[-1]
    ret.erase_operands(sorted(indices))
    set_function_type(func, FunctionType(ftype.inputs, tuple(ftype.results[i] for i in keep)))
    set_attr_dicts(func, "result", [dicts[i] for i in keep])


def _delete_op(f: int, k: int) -> Edit:
    def edit(module: Operation) -> None:
        func = _funcs(module)[f]
        op = _body_ops(func)[k]
        ret = _body_ops(func)[-1]
        returned = {use.index for r in op.results for use in r.uses if use.owner is ret}
        _drop_func_results(func, returned)
        op.erase()
    return edit


def _drop_result(f: int, i: int) -> Edit:
    def edit(module: Operation) -> None:
        _drop_func_results(_funcs(module)[f], {i})
    return edit


def _drop_constraint(f: int, k: int) -> Edit:
    def edit(module: Operation) -> None:
        op = _body_ops(_funcs(module)[f])[k]
        op.results[0].replace_all_uses_with(op.operands[0])
        op.erase()
    return edit


def _drop_sharding(f: int, kind: str, i: int) -> Edit:
    def edit(module: Operation) -> None:
        func = _funcs(module)[f]
        (set_arg_attr if kind == "arg" else set_result_attr)(func, i, "sdy.sharding", None)
    return edit


def _delete_arg(f: int, i: int) -> Edit:
    def edit(module: Operation) -> None:
        func = _funcs(module)[f]
        dicts = attr_dicts(func, "arg")
        ftype = function_type(func)
        func.regions[0].blocks[0].erase_argument(i)
        inputs = ftype.inputs[:i] + ftype.inputs[i + 1:]
        set_function_type(func, FunctionType(inputs, ftype.results))
        set_attr_dicts(func, "arg", dicts[:i] + dicts[i + 1:])
    return edit


def _only_returned(op: Operation, ret: Operation) -> bool:
    return all(use.owner is ret for r in op.results for use in r.uses)


def edits(module: Operation) -> Iterator[Edit]:
    """The one-step simplifications of ``module``, the biggest first."""
    for f, func in enumerate(_funcs(module)):
        if not func.regions or not func.regions[0].blocks:
            continue
        yield from _body_edits(f, func)
        yield from _signature_edits(f, func)


def _body_edits(f: int, func: Operation) -> Iterator[Edit]:
    """Deleting an op only the ``return`` uses (last first), dropping a constraint."""
    ops = _body_ops(func)
    for k in reversed(range(len(ops) - 1)):
        if _only_returned(ops[k], ops[-1]):
            yield _delete_op(f, k)
    for k, op in enumerate(ops):
        if op.name == "sdy.sharding_constraint":
            yield _drop_constraint(f, k)


def _signature_edits(f: int, func: Operation) -> Iterator[Edit]:
    """Dropping a result (of several), an argument's or a result's user sharding, an
    unused argument."""
    ftype = function_type(func)
    if len(ftype.results) > 1:
        yield from (_drop_result(f, i) for i in reversed(range(len(ftype.results))))
    for i in range(len(ftype.inputs)):
        if get_arg_attr(func, i, "sdy.sharding") is not None:
            yield _drop_sharding(f, "arg", i)
    for i in range(len(ftype.results)):
        if get_result_attr(func, i, "sdy.sharding") is not None:
            yield _drop_sharding(f, "result", i)
    for arg in reversed(func.regions[0].blocks[0].args):
        if not arg.has_uses:
            yield _delete_arg(f, arg.index)


def op_count(text: str) -> int:
    """The ops in the functions of ``text`` (terminators included)."""
    return sum(sum(1 for op in func.walk() if op is not func)
               for func in _funcs(parse_module(text)))


def candidates(text: str) -> list[str]:
    """The programs one edit away from ``text`` (each verifies)."""
    from shardy_ref.ir.diagnostics import ShardyRefError
    from shardy_ref.ir.verify import verify_module

    out = []
    for edit in edits(parse_module(text)):
        module = parse_module(text)
        edit(module)
        try:
            verify_module(module)
        except ShardyRefError:
            continue
        out.append(print_module(module))
    return out


def shrink(text: str, still_disagrees: Callable[[list[str]], int | None]) -> str:
    """The smallest program reached greedily from ``text``: ``still_disagrees(programs)``
    gives the index of the first program that keeps the disagreement, or None."""
    for _ in range(MAX_ROUNDS):
        options = candidates(text)
        index = still_disagrees(options) if options else None
        if index is None:
            break
        text = options[index]
    return text
