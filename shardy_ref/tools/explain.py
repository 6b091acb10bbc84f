"""The analysis behind ``shardy-ref explain``: for each value of a module's main function,
its sharding after propagation, where each of its axes came from, and what partitioning does
with it (the reshards and collectives, with bytes moved per device).

Propagation runs as ``sdy-propagation-pipeline`` does, with upstream's debug options on
(``debug-sharding-origins`` and ``debug-propagation-edge-sharding`` on
``sdy-apply-sharding-constraints`` and the propagation pass, sunk by
``sdy-sink-data-flow-edges``; :mod:`shardy_ref.propagate.debugging.source_sharding`), so
every axis carries its origin (a user sharding: ``"input: 0"``, ``"output: 0"``,
``"constraint_0"``, ``"self"``...) and the steps that moved it along which op's edge.
Partitioning then continues as the export pipeline and the per-device path do
(``sdy-sharding-constraint-to-reshard``, ``sdy-insert-explicit-reshards`` full version,
``sdy-reshard-to-collectives``); each collective is charged to the value it starts from
and costed with :mod:`shardy_ref.partition.collective_cost`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr
from shardy_ref.ir.func_attrs import get_arg_attr, get_result_attr
from shardy_ref.ir.operation import BlockArgument, Operation, Value
from shardy_ref.ir.sdy_reshard_cse import mesh_of
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.types import IntegerType
from shardy_ref.ir.value_sharding import get_func_result_sharding, get_sharding
from shardy_ref.partition.collective_cost import COLLECTIVES, collective_cost
from shardy_ref.partition.exports.close_shardings import closed_like
from shardy_ref.pass_manager import PassContext, PassManager, nested, passes

ORIGINS, EDGES = "sdy.sharding_origins", "sdy.propagation_edges"
ORIGIN_NAME = "sdy.sharding_origin_name"
TAG = "explain.id"  # a discardable attribute that follows each op through partitioning
_DEBUG = "debug-sharding-origins=true debug-propagation-edge-sharding=true"
_SINK = "sink-debug-sharding-origins=true sink-debug-propagation-edge-sharding=true"


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
    value: Value
    aliases: tuple[str, ...]


# -- entry point -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Explanation:
    """The reports of a module's main function, and what could not be found out."""

    function: str
    values: tuple[ValueReport, ...]
    caveat: str = ""


def explain_module(text: str, filename: str) -> Explanation:
    """Reports for every value of the main function of the module ``text`` (parsed and
    verified first: errors are :class:`ShardyRefError` with a location)."""
    from shardy_ref.ir.diagnostics import ShardyRefError

    try:
        module, func, slots = _propagated(text, filename, edges=True)
        caveat = ""
    except ShardyRefError as e:
        # upstream's edge recording fails on some data-flow ops (a while loop's
        # ``sdy.data_flow_edge``, as sdy_opt does): explain with origins only
        module, func, slots = _propagated(text, filename, edges=False)
        caveat = f"no propagation steps: recording them fails here, as upstream ({e.message})"
    constraints = _constraint_names(func)
    names = {s.value: s.name for s in slots if s.kind != "result"}
    stories = {id(s): _stories(func, s, constraints, names) for s in slots}
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
    return Explanation(_func_name(func), tuple(reports), caveat)


def _verifier():
    from shardy_ref.ir.verify import verify_module
    return verify_module


def _propagated(text: str, filename: str, edges: bool):
    """The module parsed, verified and propagated with the debug options; its main
    function and the values to report."""
    from shardy_ref.parser import parse_module

    module = parse_module(text, filename)
    _verifier()(module)
    func = main_function(module, filename)
    slots = _slots(func, text.splitlines())
    PassManager(_propagation(edges), verify=_verifier()).run(module, PassContext())
    return module, func, slots


def main_function(module, filename: str) -> Operation:
    """``@main``, else the only public function, else the first function."""
    from shardy_ref.ir.diagnostics import ShardyRefError
    from shardy_ref.ir.location import Location

    funcs = [op for op in module.regions[0].blocks[0] if op.name == "func.func"]
    if not funcs:
        raise ShardyRefError(Location(filename, 1, 1), "the module has no function to explain")
    for f in funcs:
        if _func_name(f) == "main":
            return f
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

def _propagation(edges: bool) -> list:
    """``sdy-propagation-pipeline`` (without call-graph dedup) up to sinking the data-flow
    edges, with the debug options on (``edges``: propagation edges too)."""
    debug, sink = (_DEBUG, _SINK) if edges else (_DEBUG.split()[0], _SINK.split()[0])
    pipeline = passes(
        ("sdy-import-pipeline", "dedup-functions-fully=false"), "sdy-flatten-call-graph",
        "symbol-dce", "sdy-import-func-calls", "symbol-dce",
        ("sdy-apply-sharding-constraints", debug), "sdy-sharding-group-import",
        "sdy-pre-order-funcs",
        ("sdy-user-priority-propagate", f"keep-sharding-rules=true {debug}"),
        "sdy-export-named-computations", "sdy-propagate-to-func-results",
        "sdy-unflatten-call-graph", "symbol-dce", "sdy-insert-func-call-reshards")
    pipeline.append(nested("func.func", "sdy-constant-or-scalar-merger",
                           ("sdy-sink-data-flow-edges", sink)))
    return pipeline


def _partitioning() -> list:
    """The rest of the export pipeline, then the per-device path down to collectives."""
    pipeline = passes("sdy-remove-propagation-debug-info", "sdy-remove-sharding-groups")
    pipeline.append(nested("func.func", "sdy-sharding-constraint-to-reshard"))
    pipeline += passes("sdy-update-non-divisible-input-output-shardings",
                       "sdy-remove-sub-axes-in-input-output-shardings", "sdy-close-shardings",
                       "sdy-ref-erase-propagation-barriers")
    pipeline.append(nested("func.func", ("sdy-insert-explicit-reshards",
                                         "enable-full-version=true")))
    pipeline += passes("sdy-resolve-permutation-factors")
    pipeline.append(nested("func.func", "sdy-reshard-to-collectives"))
    return pipeline


# -- shardings and origins ---------------------------------------------------------------

def _sharding(func: Operation, slot: _Slot) -> str:
    return _show(_final_sharding(func, slot))


def _show(sharding: TensorSharding | None) -> str:
    """The sharding as ``sdy-close-shardings`` leaves it, or "" for none."""
    return f"#sdy.sharding<{closed_like(sharding).body()}>" if sharding is not None else ""


def _final_sharding(func: Operation, slot: _Slot) -> TensorSharding | None:
    return get_func_result_sharding(func, slot.index) if slot.kind == "result" \
        else get_sharding(slot.value)


def _constraint_names(func: Operation) -> dict[str, Operation]:
    """``constraint_0`` -> the op that carries it (after propagation)."""
    out = {}
    for op in func.walk():
        name = op.attributes.get(ORIGIN_NAME)
        if isinstance(name, StringAttr):
            out[name.value] = op
    return out


def _origins_of(func: Operation, slot: _Slot) -> dict[str, str]:
    """``sdy.sharding_origins`` of the value: axis name -> origin string."""
    if slot.kind == "argument":
        attr = get_arg_attr(func, slot.index, ORIGINS)
    elif slot.kind == "result":
        attr = get_result_attr(func, slot.index, ORIGINS)
    else:
        attr = slot.value.op.attributes.get(ORIGINS)
        if isinstance(attr, ArrayAttr):
            attr = attr.value[slot.index] if slot.index < len(attr.value) else None
    if not isinstance(attr, DictionaryAttr):
        return {}
    return {k: v.value if isinstance(v, StringAttr) else str(v) for k, v in attr.value}


def _stories(func: Operation, slot: _Slot, constraints,
             names: dict[Value, str]) -> tuple[AxisStory, ...]:
    sharding = _final_sharding(func, slot)
    if sharding is None:
        return ()
    origins = _origins_of(func, slot)
    moves = _moves(func, slot, names)
    out = []
    for dim, d in enumerate(sharding.dim_shardings):
        for axis in d.axes:
            key = axis.params().replace('"', "")
            origin = origins.get(key) or origins.get(axis.name)
            out.append(AxisStory(axis.params(), dim, _origin_sentence(origin, slot, constraints),
                                 tuple(moves.get(key, ()))))
    return tuple(out)


def _origin_sentence(origin: str | None, slot: _Slot, constraints) -> str:
    """Upstream's origin string as a sentence."""
    if origin is None:
        return "no origin recorded (set before propagation, e.g. on an op)"
    if origin == "self":
        if slot.kind == "argument":
            return f"user input: the sharding given on arg {slot.index}"
        if slot.kind == "result":
            return f"user output: the sharding given on result {slot.index}"
        return "this op's own user sharding (a sharding constraint or manual computation)"
    m = re.fullmatch(r"(input|output): (\d+)", origin)
    if m:
        kind = "input" if m.group(1) == "input" else "output"
        what = "arg" if kind == "input" else "result"
        return f"user {kind}: the sharding given on {what} {m.group(2)} ({origin})"
    m = re.fullmatch(r"constraint_(\d+)", origin)
    if m:
        op = constraints.get(origin)
        where = f" at {op.location}" if op is not None and op.location.is_known else ""
        return f"a sharding constraint ({origin}{where})"
    m = re.fullmatch(r"mc_(\d+)_(input|output): (\d+)", origin)
    if m:
        side = "in_shardings" if m.group(2) == "input" else "out_shardings"
        return f"the {side}[{m.group(3)}] of manual computation {m.group(1)} ({origin})"
    return origin


# -- propagation edges -------------------------------------------------------------------

def _moves(func: Operation, slot: _Slot, names: dict[Value, str]) -> dict[str, list[str]]:
    """Axis name -> sentences for the propagation steps that moved it into the value:
    edges on its defining op targeting it, on its users targeting it as an operand, and on
    the function's argument/result attributes."""
    out: dict[str, list[str]] = {}
    for op, attr, targets_it in _edge_sources(func, slot):
        for step in getattr(attr, "value", ()):
            for entry in step.axis_entries:
                if not any(targets_it(t) for t in entry.targets):
                    continue
                key = entry.axis_name.params().replace('"', "")
                out.setdefault(key, []).append(
                    f"step {step.step_index}: {_where(op, names)} moved it here from "
                    f"{_ref(op, entry.source, names)}")
    return out


def _edge_sources(func: Operation, slot: _Slot):
    """``(op or None for the function, propagation_edges attr, target predicate)``."""
    v = slot.value
    if slot.kind == "argument":
        for use in list(v.uses):
            yield from _user_edges(use.owner, v)
        return
    if slot.kind == "result":
        attr = get_result_attr(func, slot.index, EDGES)
        if attr is not None:
            yield None, attr, lambda t: t.type == "result"
        return
    op = v.op
    if EDGES in op.attributes:
        yield op, op.attributes[EDGES], lambda t: t.type == "result" and t.index == slot.index
    for use in list(v.uses):
        yield from _user_edges(use.owner, v)


def _user_edges(user: Operation, v: Value):
    attr = user.attributes.get(EDGES)
    if attr is None:
        return
    indices = {i for i, o in enumerate(user.operands) if o is v}
    yield user, attr, lambda t: t.type == "operand" and t.index in indices


def _where(op: Operation | None, names: dict[Value, str]) -> str:
    """``stablehlo.negate %2 (file:7:8)``: an op by its name, result and location."""
    if op is None:
        return "the function's return"
    result = f" {names[op.results[0]]}" if op.results and op.results[0] in names else ""
    loc = f" ({op.location})" if op.location.is_known else ""
    return f"{op.name}{result}{loc}"


def _ref(op: Operation | None, ref, names: dict[Value, str]) -> str:
    """``operand-0`` of ``op`` as ``its operand 0 (arg0)``."""
    if op is None:
        return "the function result's user sharding" if ref.type == "result" \
            else "the returned value"
    values = op.operands if ref.type == "operand" else op.results
    if ref.index >= len(values):
        return f"its {ref.type} {ref.index}"
    name = names.get(values[ref.index])
    return f"its {ref.type} {ref.index}" + (f" ({name})" if name else "")


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
