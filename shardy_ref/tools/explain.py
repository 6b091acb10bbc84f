"""The analysis behind ``shardy-ref explain``: for each value of a module's main function,
its sharding after propagation, where each of its axes came from, and what partitioning does
with it (the reshards and collectives, with bytes moved per device).

Propagation runs as ``sdy-propagation-pipeline`` does, and the propagator's own record
(:mod:`shardy_ref.propagate.provenance`: every step that changed a sharding, with its op,
rule, strategy and priority round) says where each axis came from: which op moved it along
which factor, from which tensor, back to the user sharding that had it before propagation
(an argument or result sharding, a sharding constraint, a manual computation's sharding).
Partitioning then continues as the export pipeline and the per-device path do
(``sdy-sharding-constraint-to-reshard``, ``sdy-insert-explicit-reshards`` full version,
``sdy-reshard-to-collectives``); each collective is charged to the value it starts from
and costed with :mod:`shardy_ref.partition.collective_cost`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import IntegerAttr
from shardy_ref.ir.operation import BlockArgument, Operation, Value
from shardy_ref.ir.sdy_reshard_cse import mesh_of
from shardy_ref.ir.sdy_rules import factor_symbol
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.types import IntegerType
from shardy_ref.ir.utils import closed_like, entry_function
from shardy_ref.ir.value_sharding import get_func_result_sharding, get_sharding
from shardy_ref.partition.collective_cost import COLLECTIVES, collective_cost
from shardy_ref.pass_manager import PassContext, PassManager, make_pass, passes
from shardy_ref.propagate import provenance
from shardy_ref.propagate.provenance import (
    FuncResult,
    ProvenanceLog,
    axis_story,
    key_id,
    sharding_of,
)

TAG = "explain.id"  # a discardable attribute that follows each op through partitioning


@dataclass(frozen=True, slots=True)
class AxisStory:
    """One axis of a value's sharding: the dimension it shards, where it came from, and
    the propagation steps that moved it into this value."""

    axis: str
    dim: int
    origin: str
    moves: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Collective:
    """A collective partitioning inserted, charged to the value it starts from."""

    text: str  # ``sdy.all_gather gathering_axes=[{"x"}, {}] out_sharding=<...>``
    summary: str  # what it does in words: ``gathers "x"``
    group_size: int
    bytes_per_device: int
    consumer: str  # which op takes its result (``stablehlo.negate %2``), or ""


@dataclass(frozen=True, slots=True)
class ValueReport:
    """Everything ``explain`` says about one value."""

    name: str  # ``%0``, ``arg1``, ``result0``
    aliases: tuple[str, ...]  # names in the source: ``%h``, ``loc("matmul")``
    kind: str  # "argument" | "result" | "value"
    op: str  # defining op name ("" for arguments and results)
    type: str
    sharding: str  # the sharding after propagation, or "" for none (replicated)
    axes: tuple[AxisStory, ...]
    collectives: tuple[Collective, ...]
    note: str = ""
    partitioned_as: str = ""  # the op's sharding after partitioning, when it differs


@dataclass(slots=True)
class _Slot:
    """A value to report while the passes run: how to find it and its report so far."""

    name: str
    kind: str
    index: int
    value: Value  # the value in the function as it is now (passes may replace its op)
    aliases: tuple[str, ...]
    during_propagation: Value | None = None  # the value propagation saw, for its stories


# -- entry point -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Explanation:
    """The reports of a module's main function."""

    function: str
    values: tuple[ValueReport, ...]
    propagated_by: tuple[str, ...] = ()  # the passes whose steps the stories cite


def explain_module(text: str, filename: str) -> Explanation:
    """Reports for every value of the main function of the module ``text`` (parsed and
    verified first: errors are :class:`ShardyRefError` with a location)."""
    module, func, slots, log, written = _propagated(text, filename)
    names = {v: s.name for s in slots if s.kind != "result"
             for v in (s.value, s.during_propagation)}
    stories = {id(s): _stories(func, s, log, names, written) for s in slots}
    shardings = {id(s): _sharding(func, s) for s in slots}
    _tag_ops(func)
    PassManager(_partitioning(), verify=_verifier()).run(module, PassContext())
    charged = _charge_collectives(func)
    reports = []
    for s in slots:
        op = s.value.op if s.kind == "value" else None
        after = _show(_final_sharding(func, s)) if op is not None and op.parent is not None \
            else shardings[id(s)]
        reports.append(ValueReport(
            s.name, s.aliases, s.kind, op.name if op is not None else "", str(s.value.type),
            shardings[id(s)], stories[id(s)], tuple(charged.get(_key(s), ())), _note(s),
            after if after != shardings[id(s)] else ""))
    passes = tuple(dict.fromkeys(step.phase.pass_name for step in log.steps)) if log else ()
    return Explanation(_func_name(func), tuple(reports), passes)


def _verifier():
    from shardy_ref.ir.verify import verify_module
    return verify_module


def _propagated(text: str, filename: str):
    """The module parsed, verified and propagated; its main function, the values to
    report, the propagator's provenance log, and the shardings the source wrote."""
    from shardy_ref.parser import parse_module

    module = parse_module(text, filename)
    _verifier()(module)
    func = main_function(module, filename)
    slots = _slots(func, text.splitlines())
    written = written_shardings(func)
    ctx = PassContext()
    PassManager(propagation_passes(), verify=_verifier()).run(module, ctx)
    for slot, value in zip(slots, _follow(func, slots), strict=True):
        slot.during_propagation = value
        written.setdefault(key_id(value), written.get(key_id(slot.value)))
    PassManager(export_passes(), verify=_verifier()).run(module, ctx)
    for slot, value in zip(slots, _follow(func, slots), strict=True):
        slot.value = value
    return module, func, slots, ctx.provenance, written


def _follow(func: Operation, slots: list[_Slot]) -> list[Value]:
    """Each slot's value in ``func`` now: its own, or, when a pass replaced its op (a
    ``func.call`` becomes an ``sdy.named_computation`` during propagation and a call again
    after), the result at the same index of the op with the same source location (one of
    the same name if several), data-flow edges aside."""
    by_location: dict[tuple[str, int], list[Value]] = {}
    for op in func.walk():
        if op.location.is_known and op.name not in provenance.EDGE_OPS:
            for r in op.results:
                by_location.setdefault((str(op.location), r.index), []).append(r)
    out = []
    for slot in slots:
        value = slot.value
        if slot.kind == "value" and value.op.parent is None:
            found = by_location.get((str(value.op.location), value.index), [])
            same = [v for v in found if v.op.name == value.op.name]
            value = (same or found or [value])[0]
        out.append(value)
    return out


def main_function(module, filename: str) -> Operation:
    """``@main``, else the only function (:func:`~shardy_ref.ir.utils.entry_function`);
    else the only public function, else the first function: ``explain`` reports on any
    module that has a function."""
    from shardy_ref.ir.diagnostics import EntryFunctionError, ShardyRefError
    from shardy_ref.ir.location import Location

    try:
        return entry_function(module)
    except EntryFunctionError:
        funcs = [op for op in module.regions[0].blocks[0] if op.name == "func.func"]
    if not funcs:
        raise ShardyRefError(Location(filename, 1, 1), "the module has no function to explain")
    public = [f for f in funcs if "sym_visibility" not in f.attributes]
    return public[0] if len(public) == 1 else funcs[0]


def _func_name(func: Operation) -> str:
    attr = func.attributes.get("sym_name")
    return getattr(attr, "value", str(attr))


# -- naming ------------------------------------------------------------------------------

_SOURCE_NAME = re.compile(r"^\s*(%[\w$.-]+)(?::\d+)?\s*=")
_LOC_NAME = re.compile(r'loc\("([^"]*)"')
_NEXT_OP = re.compile(r"^\s*(%[\w$.-]+(:\d+)?\s*=|[\w.]+\.[\w.]+\b|\}|return\b|func\.)")


def _slots(func: Operation, lines: list[str]) -> list[_Slot]:
    """Arguments, op results (printed names, as ``shardy-ref print`` shows them) and
    results of ``func``, with the names the source gives them."""
    from shardy_ref.parser.names import NameState

    names = NameState(func)
    block = func.regions[0].blocks[0]
    slots = [_Slot(f"arg{i}", "argument", i, a, (f"%arg{i}",)) for i, a in enumerate(block.args)]
    for op in func.walk():
        if op is func:
            continue
        for r in op.results:
            slots.append(_Slot(names.use(r), "value", r.index, r,
                               _source_names(op, r, names.use(r), lines)))
    ret = block.terminator
    for i, v in enumerate(ret.operands):
        slots.append(_Slot(f"result{i}", "result", i, v, ()))
    return slots


def _source_names(op: Operation, r: Value, printed: str, lines: list[str]) -> tuple[str, ...]:
    """The SSA name the source wrote for ``op``'s first result and its ``loc("name")``
    (on the op's lines: up to the line where the next op, a ``}`` or a ``return`` starts)."""
    line = op.location.line
    if not 0 < line <= len(lines):
        return ()
    out = []
    m = _SOURCE_NAME.match(lines[line - 1])
    if m and r.index == 0 and m.group(1) != printed:
        out.append(m.group(1))
    end = line
    while end < len(lines) and end < line + 20 and not _NEXT_OP.match(lines[end]):
        end += 1
    for loc in _LOC_NAME.findall("\n".join(lines[line - 1:end]))[-1:]:
        out.append(f'loc("{loc}")')
    return tuple(out)


def find_value(reports, name: str) -> list[ValueReport]:
    """The reports ``name`` refers to: ``%3``, ``3``, ``arg0``, ``%arg0``, ``result0``, a
    source name (``%h``), ``loc("name")`` or just ``name`` of a loc."""
    wanted = {name, f"%{name}", f'loc("{name}")'}
    return [r for r in reports if r.name in wanted or wanted & set(r.aliases)]


# -- passes ------------------------------------------------------------------------------

def propagation_passes() -> list:
    """``sdy-propagation-pipeline`` up to the end of propagation."""
    return _stage(_propagation_pipeline(), "sdy-user-priority-propagate")


def export_passes() -> list:
    """The rest of ``sdy-propagation-pipeline`` up to sinking the data-flow edges."""
    return _stage(_propagation_pipeline(), "sdy-sink-data-flow-edges",
                  after="sdy-user-priority-propagate")


def _partitioning() -> list:
    """The rest of the export pipeline up to closing the shardings, then the per-device
    pipeline's passes down to collectives (``sdy-ref-make-partitionable`` left out)."""
    from shardy_ref.partition.per_device_pipeline import per_device_passes

    export = _stage(_propagation_pipeline(), "sdy-close-shardings",
                    after="sdy-sink-data-flow-edges")
    per_device = passes(*(p for p in per_device_passes()
                          if p[0] != "sdy-ref-make-partitionable"))
    return export + _stage(per_device, "sdy-reshard-to-collectives")


def _propagation_pipeline() -> list:
    return make_pass("sdy-propagation-pipeline").elements()


def _stage(pipeline: list, last: str, after: str | None = None) -> list:
    """The elements of ``pipeline`` after the one running pass ``after`` (default: from the
    start) up to the one running pass ``last``."""
    def runs(element, name: str) -> bool:
        return any(e.pass_.NAME == name for e in (element.nested or (element,)))

    start = next(i + 1 for i, e in enumerate(pipeline) if runs(e, after)) if after else 0
    stop = next(i for i, e in enumerate(pipeline) if i >= start and runs(e, last))
    return pipeline[start:stop + 1]


# -- shardings and origins ---------------------------------------------------------------

def _sharding(func: Operation, slot: _Slot) -> str:
    return _show(_final_sharding(func, slot))


def _show(sharding: TensorSharding | None) -> str:
    """The sharding as ``sdy-close-shardings`` leaves it, or "" for none."""
    return f"#sdy.sharding<{closed_like(sharding).body()}>" if sharding is not None else ""


def _final_sharding(func: Operation, slot: _Slot) -> TensorSharding | None:
    return get_func_result_sharding(func, slot.index) if slot.kind == "result" \
        else get_sharding(slot.value)


def _stories(func: Operation, slot: _Slot, log: ProvenanceLog | None,
             names: dict[Value, str], written: dict) -> tuple[AxisStory, ...]:
    """Each axis of the value's sharding, followed back through the propagator's log to
    the sharding that had it before propagation."""
    sharding = _final_sharding(func, slot)
    if sharding is None:
        return ()
    key = FuncResult(func, slot.index) if slot.kind == "result" \
        else slot.during_propagation or slot.value
    out = []
    for dim, d in enumerate(sharding.dim_shardings):
        for axis in d.axes:
            story = axis_story(log, key, dim, axis) if log is not None \
                else provenance.AxisStory((), key, dim, axis)
            out.append(AxisStory(axis.params(), dim,
                                 _origin_sentence(story, func, names, written),
                                 tuple(_move_sentence(m, func, names)
                                       for m in reversed(story.moves))))
    return tuple(out)


def written_shardings(func: Operation) -> dict:
    """The shardings as the source writes them, before any pass, by
    :func:`~shardy_ref.propagate.provenance.key_id` of every argument, op result and
    function result of ``func``."""
    keys = [*func.regions[0].blocks[0].args,
            *(FuncResult(func, i) for i in range(len(func.regions[0].blocks[0].terminator
                                                     .operands))),
            *(r for op in func.walk() for r in op.results)]
    return {key_id(k): sharding_of(k) for k in keys}


def _origin_sentence(story: provenance.AxisStory, func: Operation,
                     names: dict[Value, str], written: dict) -> str:
    """Where the axis was before propagation, as a sentence: a sharding the source writes,
    or one an import pass gave the value from a constraint or manual computation."""
    key = story.origin
    if key is None:
        first = story.moves[-1].step
        return (f"step {first.index}: no tensor of {_where(first.op, func, names)} had it "
                "before; the strategy chose it")
    if provenance.has_axis(provenance.dim_axes(written.get(key_id(key)), story.origin_dim),
                           story.origin_axis):
        return _written_origin(key, func, names)
    user = _applying_user(key, story)
    if user is not None and user.name == "sdy.sharding_constraint":
        return (f"the sharding constraint {_where(user, func, names)} on this value "
                "(sdy-apply-sharding-constraints gave it the constraint's sharding)")
    if user is not None:
        index = next(i for i, o in enumerate(user.operands) if o is key)
        return (f"in_shardings[{index}] of the manual computation {_where(user, func, names)} "
                "(sdy-apply-sharding-constraints gave it to this operand)")
    return "an import pass, before propagation (the source does not write it here)"


def _written_origin(key, func: Operation, names: dict[Value, str]) -> str:
    if isinstance(key, FuncResult):
        return f"user output: the sharding given on result {key.index}"
    if isinstance(key, BlockArgument):
        owner = key.block.parent_op
        if owner is func:
            return f"user input: the sharding given on arg {key.index}"
        return f"the sharding of block argument {key.index} of {_where(owner, func, names)}"
    op = key.op
    if op.name == "sdy.sharding_constraint":
        return f"the sharding constraint {_where(op, func, names)}"
    if op.name == "sdy.manual_computation":
        return f"out_shardings[{key.index}] of the manual computation {_where(op, func, names)}"
    return f"the sharding the source gives {_where(op, func, names)}"


def _applying_user(key, story: provenance.AxisStory) -> Operation | None:
    """A sharding constraint or manual computation using ``key`` whose sharding for it has
    the axis: what ``sdy-apply-sharding-constraints`` copies onto its operand."""
    if isinstance(key, FuncResult):
        return None
    for use in key.uses:
        user = use.owner
        if user.name == "sdy.sharding_constraint":
            sharding = user.attributes.get("sharding")
        elif user.name == "sdy.manual_computation":
            per_value = user.attributes.get("in_shardings")
            shardings = getattr(per_value, "shardings", ())
            sharding = shardings[use.index] if use.index < len(shardings) else None
        else:
            continue
        if isinstance(sharding, TensorSharding) and provenance.has_axis(
                provenance.dim_axes(sharding, story.origin_dim), story.origin_axis):
            return user
    return None


def _move_sentence(move: provenance.Move, func: Operation, names: dict[Value, str]) -> str:
    """``step 4 (aggressive, user priority p0, op-priority round 3): stablehlo.dot_general %2
    (f:10:8) moved it along factor k of ([i, k], [k, j])->([i, j]) from its operand 0 (%1)
    to its operand 1 (arg2)``."""
    step = move.step
    head = f"step {step.index} ({step.phase.describe(with_pass=False)}): "
    if step.kind == "priority":
        return head + (f"its dimension of priority p{step.phase.user_priority} got its user "
                       "sharding back (propagation kept it empty until this round)")
    target = _tensor(step, move.key, func, names)
    if step.kind == "group":
        return head + (f"their sharding group moved it from "
                       f"{_name(move.source, func, names) or 'a member'} to {target}")
    if step.op is func:
        source = _tensor(step, move.source, func, names)
        return head + f"the function's return moved it from {source} to {target}"
    factor = (f" along factor {factor_symbol(move.factor)} of {_mappings(step.rule)}"
              if move.factor is not None else "")
    if move.source_axis != move.axis:
        factor = f" (its part {move.source_axis.params()}){factor}"
    source = "no tensor that had it (the strategy chose it)" if move.source is None \
        else _tensor(step, move.source, func, names)
    return head + f"{_where(step.op, func, names)} moved it{factor} from {source} to {target}"


def _mappings(rule) -> str:
    """The rule's tensor mappings: ``([i, k], [k, j])->([i, j])``."""
    return "({})->({})".format(", ".join(m.params() for m in rule.operand_mappings),
                               ", ".join(m.params() for m in rule.result_mappings))


def _tensor(step: provenance.Step, key, func: Operation, names: dict[Value, str]) -> str:
    """``its operand 0 (%1)``: where ``key`` is among the step's tensors, and its name."""
    if isinstance(key, FuncResult):
        return f"result {key.index} of @{_func_name(key.func)}"
    index = provenance.position(step, key)
    name = _name(key, func, names)
    named = f" ({name})" if name else ""
    if step.op is func:
        return f"the returned value{named}"
    if step.op is None:  # a sharding group
        return name or "a member"
    if step.op.name in provenance.EDGE_OPS:  # sources -> the edge's owner
        return f"source {index}{named}" if index < step.num_operands \
            else f"the edge's value{named}"
    if index < step.num_operands:
        return f"its operand {index}{named}"
    return f"its result {index - step.num_operands}{named}"


def _name(key, func: Operation, names: dict[Value, str]) -> str:
    """The value's name in the explained function; for values of other functions (callees
    copied by call-graph flattening) their argument index and function."""
    if isinstance(key, FuncResult):
        return f"result{key.index}"
    name = names.get(key)
    if name is not None:
        return name
    if isinstance(key, BlockArgument):
        owner = key.block.parent_op
        if owner is not None and owner.name == "func.func":
            return f"%arg{key.index} of @{_func_name(owner)}"
        return f"block argument {key.index} of {owner.name}" if owner is not None else ""
    return ""


def _where(op: Operation | None, func: Operation, names: dict[Value, str]) -> str:
    """``stablehlo.negate %2 (file:7:8)``: an op by its name, result and location."""
    if op is None or op is func:
        return "the function's return"
    if op.name in provenance.EDGE_OPS:
        return f"the data-flow edge ({op.location})" if op.location.is_known \
            else "a data-flow edge"
    result = f" {names[op.results[0]]}" if op.results and op.results[0] in names else ""
    loc = f" ({op.location})" if op.location.is_known else ""
    return f"{op.name}{result}{loc}"


# -- partitioning ------------------------------------------------------------------------

def _tag_ops(func: Operation) -> None:
    """Number every op, so that a value's op is found again after partitioning (the
    constraint-to-reshard pass keeps discardable attributes)."""
    for i, op in enumerate(func.walk()):
        op.attributes[TAG] = IntegerAttr(i, IntegerType(64))


def _key(slot: _Slot):
    """What collectives are charged to: the value's defining op and result, or the
    argument/result index."""
    if slot.kind == "value":
        tag = slot.value.op.attributes.get(TAG)
        return ("op", tag.value if tag is not None else id(slot.value.op), slot.index)
    return (slot.kind, slot.index)


def _charge_collectives(func: Operation) -> dict[tuple, list[Collective]]:
    """Every sdy collective in ``func``, charged to the value its chain of collectives
    starts from (and, when its result is returned, to that function result too)."""
    out: dict[tuple, list[Collective]] = {}
    for op in func.walk():
        if op.name not in COLLECTIVES:
            continue
        root = op.operands[0]
        while not isinstance(root, BlockArgument) and root.op.name in COLLECTIVES:
            root = root.op.operands[0]
        sharding = get_sharding(op.operands[0])
        mesh = mesh_of(op.attributes.get("out_sharding"), op)
        cost = collective_cost(op, sharding, mesh)
        consumers = [u.owner for u in op.results[0].uses if u.owner.name not in COLLECTIVES]
        collective = Collective(_collective_text(op), _summary(op), cost.group_size,
                                cost.bytes_per_device,
                                ", ".join(sorted({c.name for c in consumers})))
        out.setdefault(_root_key(root, func), []).append(collective)
        for c in consumers:
            if c.name == "func.return":
                for i, o in enumerate(c.operands):
                    if o is op.results[0]:
                        out.setdefault(("result", i), []).append(collective)
    return out


def _root_key(v: Value, func: Operation):
    if isinstance(v, BlockArgument):
        entry = func.regions[0].blocks[0]
        return ("argument", v.index) if v.block is entry else ("block", id(v))
    tag = v.op.attributes.get(TAG)
    return ("op", tag.value if tag is not None else id(v.op), v.index)


def _collective_text(op: Operation) -> str:
    """The collective's name and what it works over, as the printer shows its attributes."""
    keys = ("gathering_axes", "slicing_axes", "reduce_scatter_axes", "params",
            "reduction_axes")
    parts = [f"{k}={_params(op.attributes[k])}" for k in keys if k in op.attributes]
    out = op.attributes.get("out_sharding")
    if out is not None:
        parts.append(f"out_sharding=<{out.body()}>")
    return f"{op.name} " + " ".join(parts)


_VERBS = {
    "sdy.all_gather": ("gathering_axes", "all-gather: every device collects the shards of"),
    "sdy.all_slice": ("slicing_axes", "all-slice (no communication): each device keeps its "
                                      "slice along"),
    "sdy.all_reduce": ("reduction_axes", "all-reduce: partial results are summed over"),
    "sdy.reduce_scatter": ("reduce_scatter_axes", "reduce-scatter: partial results are summed "
                                                  "and scattered over"),
    "sdy.all_to_all": ("params", "all-to-all: shards are exchanged over"),
    "sdy.collective_permute": ("", "collective-permute: shards move between devices"),
}


def _summary(op: Operation) -> str:
    key, words = _VERBS[op.name]
    attr = op.attributes.get(key) if key else None
    if attr is None:
        return words
    if op.name == "sdy.all_to_all":
        axes = [a for p in attr.value for a in p.axes]
    elif op.name == "sdy.all_reduce":
        axes = list(attr)
    else:
        axes = [a for lst in attr for a in lst]
    return f"{words} {', '.join(a.params() for a in axes)}"


def _params(attr) -> str:
    return attr.params() if hasattr(attr, "params") else str(attr)


def _note(slot: _Slot) -> str:
    if slot.kind == "value" and slot.value.op.name == "sdy.sharding_constraint":
        return ("a sharding constraint: partitioning makes it a reshard of its operand, so "
                "its collectives are listed under the operand")
    op = slot.value.op if slot.kind == "value" else None
    parent = op.parent_op if op is not None else None
    while parent is not None and parent.name != "sdy.manual_computation":
        parent = parent.parent_op
    if parent is not None:
        axes = parent.attributes.get("manual_axes")
        shown = axes.params() if hasattr(axes, "params") else str(axes)
        return (f"inside an sdy.manual_computation (manual axes {shown}): a per-device "
                "value; its communication is the body's own collectives")
    return ""
