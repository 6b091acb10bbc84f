"""Where XLA's partitioned program first goes wrong: the first op of the per-device program
whose values on some devices are not their shards of what the global program computes.

XLA names every HLO instruction it builds while partitioning after the instruction of the
global program it comes from (the instruction's ``op_name`` metadata, which jaxlib's
converter writes as a location, ``loc("dot.3")``), and the global program XLA partitioned
(dumped before its partitioning pass) gives every instruction's sharding. So the *last* op
of each name in the global entry function (with a sharding) is paired with the last op of
that name in the per-device entry function that has the local shape of that sharding
(earlier ones are partial steps, such as a dot before the all-reduce that completes it). Both
programs are run once with those values as extra results, and the first such per-device
op, in program order, that some device holds wrong is reported (with the devices). The
global program is cut before its first ``custom_call`` (XLA's manual-sharding markers,
``SPMDFullToShardShape``, which one device cannot run); only values before it are compared.
This is a heuristic: an op in a region, an op whose value XLA never materializes whole, or
one XLA renamed is not a candidate, and then nothing is located.
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.backends.hlo_sharding import HloSharding, HloShardingError, parse_hlo_sharding
from shardy_ref.backends.xla_check import check_output, device_arguments
from shardy_ref.ir.diagnostics import ShardyRefError
from shardy_ref.ir.location import NameLoc
from shardy_ref.ir.types import RankedTensorType


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first wrong value: the per-device op (name, callee, position, result type),
    XLA's name for it, the global op's sharding, and how its values compare."""

    op: str
    xla_name: str
    sharding: str
    line: str
    wrong_devices: tuple[int, ...]


def first_divergence(partitioned, arrays, *, rtol: float, atol: float,
                     function: str = "main") -> Divergence | None:
    """The first op of XLA's per-device program holding a wrong value on some device, or
    None when none can be located (see the module docstring)."""
    from shardy_ref.execute import run, run_spmd
    from shardy_ref.parser import parse_module

    if not partitioned.before or not partitioned.located:
        return None
    try:
        global_module = parse_module(partitioned.before, "<XLA's input>")
        local_module = parse_module(partitioned.located, "<XLA's partitioned program>")
    except ShardyRefError:
        return None
    _cut_before_custom_calls(global_module, function)
    global_ops = _named_ops(global_module, function)
    shardings = {name: s for name, op in global_ops.items()
                 if (s := _sharding_of(op)) is not None}
    local_ops = _named_ops(local_module, function,
                           wanted={name: (global_ops[name], s)
                                   for name, s in shardings.items()})
    names = [n for n in local_ops if n in shardings]
    if not names:
        return None
    order = sorted(names, key=lambda n: _position(local_ops[n]))
    extra_global = _return_also(global_module, function, [global_ops[n] for n in order],
                                replace=True)
    extra_local = _return_also(local_module, function, [local_ops[n] for n in order])
    try:
        want = run(global_module, *arrays, function=function)[extra_global:]
        got = run_spmd(local_module, device_arguments(partitioned, arrays),
                       function=function)
    except ShardyRefError:
        return None
    for k, name in enumerate(order):
        result = check_output(k, shardings[name], [g[extra_local + k] for g in got], want[k],
                              rtol, atol)
        if not result.same:
            op = local_ops[name]
            return Divergence(_describe(op), name, str(shardings[name]), result.line,
                              result.wrong_devices)
    return None


def _named_ops(module, function: str, *, wanted=None) -> dict:
    """Top-level single-result tensor ops of the entry function by their location name;
    with ``wanted`` (name -> (global op, sharding)), only ops of the local shape of that
    sharding, the last of each name."""
    from shardy_ref.ir.utils import entry_function

    func = entry_function(module, None if function == "main" else function)
    found: dict = {}
    for op in func.regions[0].blocks[0]:
        name = _name(op)
        if name is None or len(op.results) != 1 or op.name == "stablehlo.constant" or \
                not isinstance(op.results[0].type, RankedTensorType):
            continue
        if wanted is not None:
            if name not in wanted:
                continue
            global_op, sharding = wanted[name]
            try:
                local = sharding.local_shape(global_op.results[0].type.shape)
            except HloShardingError:
                continue
            if tuple(op.results[0].type.shape) != local or \
                    op.results[0].type.element_type != global_op.results[0].type.element_type:
                continue
        found[name] = op  # the last op of each name wins
    return found


def _name(op) -> str | None:
    loc = op.debug_location
    return loc.name if isinstance(loc, NameLoc) else None


def _sharding_of(op) -> HloSharding | None:
    attr = op.attributes.get("mhlo.sharding")
    text = getattr(attr, "value", None)
    if not isinstance(text, str):
        return None
    try:
        sharding = parse_hlo_sharding(text)
    except HloShardingError:
        return None
    return sharding if sharding.kind in ("tiled", "replicated", "unreduced") else None


def _position(op) -> int:
    return op.parent.op_order(op)


def _cut_before_custom_calls(module, function: str) -> None:
    """Erase the entry function's ops from its first ``custom_call`` on (its terminator
    then returns nothing until :func:`_return_also` gives it values)."""
    from shardy_ref.ir.utils import entry_function

    block = entry_function(module, None if function == "main" else function).regions[0] \
        .blocks[0]
    ops = list(block)
    cut = next((i for i, op in enumerate(ops) if op.name == "stablehlo.custom_call"), None)
    if cut is None:
        return
    ops[-1].set_operands([])
    for op in reversed(ops[cut:-1]):
        op.erase()


def _return_also(module, function: str, ops: list, replace: bool = False) -> int:
    """Make the entry function return the results of ``ops`` after its own (instead of
    them, with ``replace``); returns how many results come before."""
    from shardy_ref.ir.builtin_attrs import TypeAttr
    from shardy_ref.ir.types import FunctionType
    from shardy_ref.ir.utils import entry_function

    func = entry_function(module, None if function == "main" else function)
    block = func.regions[0].blocks[0]
    ret = block.terminator
    kept = [] if replace else list(ret.operands)
    ret.set_operands([*kept, *(op.results[0] for op in ops)])
    signature = func.attributes["function_type"].value
    func.attributes["function_type"] = TypeAttr(FunctionType(
        signature.inputs, (*(v.type for v in kept), *(op.results[0].type for op in ops))))
    func.attributes.pop("res_attrs", None)
    return len(kept)


def _describe(op) -> str:
    """The op's name (and callee), its position in its function and its result type."""
    callee = op.attributes.get("callee")
    name = op.name + (f" @{callee.root}" if callee is not None else "")
    return f"{name} (op {_position(op) + 1} of @main) -> {op.results[0].type}"
