"""The pass registry, pipeline strings, and the pass manager.

Passes are frozen dataclasses whose fields are upstream's options
(``conservative_propagation: bool`` <-> ``conservative-propagation=true``), registered under
upstream's pass name with :func:`register_pass`. :data:`PASS_MODULES` says which module
defines each pass, so a pipeline imports only the passes it runs (start-up stays small).
Pipelines are written as mlir-opt writes them: ``-sdy-foo="a=1 b=true"`` on the command
line or ``builtin.module(sdy-foo{a=1},func.func(sdy-bar))`` with ``--pass-pipeline``.
"""
from __future__ import annotations

import dataclasses
import gc
import importlib
import re
import threading
import typing
from contextlib import contextmanager, nullcontext, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import ClassVar

from shardy_ref.ir.change_count import change_count, cross_checking
from shardy_ref.ir.diagnostics import Diagnostic, PassError, ShardyRefError
from shardy_ref.ir.gc_pause import collector_paused
from shardy_ref.ir.ir_snapshot import ir_snapshot, unchanged_since
from shardy_ref.ir.location import UNKNOWN_LOC
from shardy_ref.ir.operation import IRError, Operation
from shardy_ref.ir.run_memo import pipeline_memos
from shardy_ref.ir.symbols import symbols_fixed

_IMPORT = "shardy_ref.propagate.import_."  # upstream transforms/import
_EXPORT = "shardy_ref.partition.export."  # upstream transforms/export


def _by_name(package: str, *names: str) -> dict[str, str]:
    """``sdy-foo-bar`` defined in ``package + "foo_bar"``: the module is named after the pass,
    as upstream's ``.cc`` file is."""
    return {f"sdy-{name.replace('_', '-')}": package + name for name in names}


# upstream pass name -> module defining it
PASS_MODULES: dict[str, str] = {
    "symbol-dce": "shardy_ref.transforms.symbol_dce",
    "cse": "shardy_ref.transforms.cse",
    "inline": "shardy_ref.transforms.inline",
    "canonicalize": "shardy_ref.transforms.canonicalize",
    "chlo-legalize-to-stablehlo": "shardy_ref.transforms.chlo_legalize",
    "chlo-pre-serialization-pipeline": "shardy_ref.transforms.chlo_pre_serialization",
    "shape-legalize-to-stablehlo": "shardy_ref.transforms.chlo_pre_serialization",
    "stablehlo-legalize-composite-to-call": "shardy_ref.transforms.composite_to_call",
    # import passes (https://openxla.org/shardy/sdy_import_passes)
    **_by_name(_IMPORT, "lift_inlined_meshes", "remove_size_one_axes", "manual_axes_cleanup",
               "constant_or_scalar_splitter", "add_data_flow_edges",
               "apply_sharding_constraints", "sharding_group_import",
               "propagate_sharding_from_func_to_call", "flatten_call_graph", "pre_order_funcs",
               "import_func_calls", "add_func_data_flow_edges",
               "explicit_gather_scatter_batching", "import_pipeline"),
    "sdy-inline-meshes": "shardy_ref.transforms.common.inline_meshes",
    "sdy-populate-op-sharding-rules": "shardy_ref.propagate.rules.populate",
    # propagation (https://openxla.org/shardy/sdy_propagation_passes)
    **dict.fromkeys(("sdy-basic-propagate", "sdy-aggressive-propagate",
                     "sdy-op-priority-propagate", "sdy-user-priority-propagate"),
                    "shardy_ref.propagate.passes"),
    "sdy-propagation-pipeline": "shardy_ref.propagate.propagation_pipeline",
    # export passes (https://openxla.org/shardy/sdy_export_passes)
    **_by_name(_EXPORT, "export_pipeline", "sink_data_flow_edges", "sink_func_data_flow_edges",
               "propagate_to_func_results", "export_named_computations", "unflatten_call_graph",
               "insert_func_call_reshards", "constant_or_scalar_merger", "remove_sharding_groups",
               "close_shardings", "drop_sharding_rules",
               "update_non_divisible_input_output_shardings",
               "remove_sub_axes_in_input_output_shardings", "drop_sharding_and_mesh",
               "remove_propagation_debug_info", "sharding_constraint_to_reshard",
               "verify_unreduced_axes", "insert_explicit_reshards", "reshard_to_collectives",
               "resolve_single_device_sharding", "resolve_permutation_factors",
               "pad_for_divisibility", "per_instruction_partitioning"),
    "sdy-remove-all-gather-reduce-scatter-for-cmv1": _EXPORT + "remove_ag_rs_for_cmv1",
    "sdy-convert-global-to-local": _EXPORT + "convert_global_to_local.pass_",
    # this project's partitioner, after the export passes
    "sdy-ref-per-device-pipeline": "shardy_ref.partition.per_device_pipeline",
    "sdy-ref-erase-propagation-barriers": "shardy_ref.partition.erase_propagation_barriers",
    "sdy-ref-make-partitionable": "shardy_ref.partition.make_partitionable",
}

PASSES: dict[str, type[Pass]] = {}


class Pass:
    """Base of all passes. ``NAME`` is the upstream name; ``ANCHOR`` the op it runs on."""

    NAME: ClassVar[str] = ""
    ANCHOR: ClassVar[str] = "builtin.module"

    def run(self, op: Operation, ctx: PassContext) -> None:
        raise NotImplementedError


class PassPipeline(Pass):
    """A named pipeline (MLIR ``PassPipelineRegistration``): runs as the passes
    :meth:`elements` lists, each verified after it runs like any other pass."""

    def elements(self) -> list[PipelineElement]:
        raise NotImplementedError


def passes(*specs: str | tuple[str, str]) -> list[PipelineElement]:
    """``passes("symbol-dce", ("sdy-foo", "a=1"))`` -> pipeline elements, for
    :meth:`PassPipeline.elements`."""
    out = []
    for spec in specs:
        name, options = (spec, "") if isinstance(spec, str) else spec
        out.append(PipelineElement(pass_=make_pass(name, options)))
    return out


def nested(op_name: str, *specs: str | tuple[str, str]) -> PipelineElement:
    """``nested("func.func", "sdy-bar")``: passes run on each ``op_name`` op."""
    return PipelineElement(op_name=op_name, nested=tuple(passes(*specs)))


def register_pass(cls: type[Pass]) -> type[Pass]:
    """Class decorator: make a pass available under its upstream name."""
    if not cls.NAME:
        raise ValueError(f"{cls.__name__} has no NAME")
    PASSES[cls.NAME] = cls
    return cls


def pass_class(name: str) -> type[Pass]:
    if name not in PASSES:
        module = PASS_MODULES.get(name)
        if module is not None:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as e:
                if e.name != module:
                    raise
        if name not in PASSES:
            raise PassError(None, f"'{name}' does not refer to a registered pass or pass pipeline")
    return PASSES[name]


@dataclass(slots=True)
class PassContext:
    """What a running pass may use besides the IR: where to report diagnostics."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    # the running propagation pass's ``SourceShardingHandler`` (debug options), else None
    sharding_debug: object | None = None
    # the propagator's ``ProvenanceLog`` (shardy_ref.propagate.provenance), made by the
    # first propagation pass of the run; ``record_provenance=False`` turns it off
    record_provenance: bool = True
    provenance: object | None = None
    # CHLO's elementwise ops (the special functions ``chlo-legalize-to-stablehlo`` keeps)
    # get the pointwise rule of the StableHLO they legalize to: the simulator's view, as
    # XLA legalizes CHLO before partitioning; upstream's registry has no rule for them
    legalized_chlo: bool = False

    def warn(self, location, message: str) -> None:
        self.diagnostics.append(Diagnostic("warning", location or UNKNOWN_LOC, message))

    def remark(self, location, message: str) -> None:
        self.diagnostics.append(Diagnostic("remark", location or UNKNOWN_LOC, message))


# -- options ----------------------------------------------------------------------------

def _split_options(text: str) -> list[tuple[str, str | None]]:
    """``a=1 b="x y" c`` -> ``[("a", "1"), ("b", "x y"), ("c", None)]`` (mlir-opt's syntax)."""
    out = []
    for m in re.finditer(r"""\s*([^\s=]+)(?:=("[^"]*"|'[^']*'|\{[^}]*\}|[^\s]*))?""", text):
        key, value = m.group(1), m.group(2)
        if value is not None and len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out.append((key, value))
    return out


def _convert(name: str, key: str, value: str | None, annotation) -> object:
    """An option's text as its field's type; a missing value (``key`` alone) is only valid
    for a ``bool``, where it means true."""
    origin = typing.get_origin(annotation)
    if annotation is bool or annotation == "bool":
        converted = _convert_bool(value)
    elif value is None:
        converted = None
    elif annotation is int or annotation == "int":
        converted = _convert_int(value)
    elif annotation is str or annotation == "str":
        return value
    elif origin is tuple or (isinstance(annotation, str) and annotation.startswith("tuple")):
        return tuple(v for v in value.split(",") if v)
    else:
        return value
    if converted is None:
        raise PassError(None, f"{name}: invalid value '{value}' for option '{key}'")
    return converted


def _convert_bool(value: str | None) -> bool | None:
    if value is None or value.lower() in ("true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    return None


def _convert_int(value: str) -> int | None:
    try:
        number = int(value)
    except ValueError:
        return None
    if -2**63 <= number < 2**63:  # MLIR's integer options hold 64 bits at most
        return number
    return None


def option_name(field_name: str) -> str:
    """The mlir-opt name of the option a pass field holds: ``keep_sharding_rules`` ->
    ``keep-sharding-rules``; a trailing ``_`` (``except_``: a Python keyword) is dropped."""
    return field_name.rstrip("_").replace("_", "-")


def make_pass(name: str, options: str = "") -> Pass:
    """Instantiate pass ``name`` with mlir-opt style options (``"a=1 b=true"``)."""
    cls = pass_class(name)
    fields = {option_name(f.name): f for f in dataclasses.fields(cls)} \
        if dataclasses.is_dataclass(cls) else {}
    kwargs = {}
    for key, value in _split_options(options):
        f = fields.get(key)
        if f is None:
            raise PassError(None, f"{name}: no such option {key}")
        kwargs[f.name] = _convert(name, key, value, f.type)
    return cls(**kwargs)


# -- pipelines ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PipelineElement:
    """A pass, or a nested pipeline anchored on ``op_name`` (``func.func(...)``)."""

    pass_: Pass | None = None
    op_name: str | None = None
    nested: tuple[PipelineElement, ...] = ()


TOP_ANCHOR = "builtin.module"
MAX_PIPELINE_DEPTH = 100
_PIPELINE_BUFFER = "MLIR Textual PassPipeline Parser"  # the name mlir-opt's errors give it
_NOT_WRAPPED = ("expected pass pipeline to be wrapped with the anchor operation type, "
                "e.g. 'builtin.module(...)'")


def parse_pipeline(text: str, *, anchored: bool = False) -> list[PipelineElement]:
    """Parse a pipeline string as mlir-opt's ``--pass-pipeline`` does.

    ``builtin.module(a{x=1},func.func(b))`` nests explicitly: each pass must run on the op
    its anchor names (``func.func(sdy-close-shardings)`` is an error, as upstream). Without
    the ``builtin.module(...)`` wrapper (library use, ``anchored=False``) the top level is a
    flat list whose passes nest implicitly, like ``-pass`` flags; ``anchored=True`` (the
    command line) requires the wrapper. Errors use mlir-opt's words and columns.
    """
    text = text.strip()
    start = text.find("(")
    wrapped = start > 0 and text.endswith(")")
    if anchored and not wrapped:
        raise PassError(None, _NOT_WRAPPED)
    anchor, body = None, text
    if wrapped and (anchored or text[:start].rstrip() == TOP_ANCHOR):
        anchor, body = text[:start].rstrip(), text[start + 1:-1]
    parsed = _parse_pipeline_text(body) if body else []
    _resolve(parsed, body)
    elements = _build(parsed, anchor)
    if anchor not in (None, TOP_ANCHOR):
        raise PassError(None, f"can't run '{anchor}' pass manager on '{TOP_ANCHOR}' op")
    return elements


@dataclass(slots=True)
class _Parsed:
    """A name of a pipeline string as written: a pass with its options, or (``nested`` not
    None) an op anchor with the pipeline nested in it; ``pos`` is the name's offset."""

    name: str
    pos: int
    options: str = ""
    nested: list[_Parsed] | None = None


_SEPARATOR = re.compile(r"[,(){]")
_SPACE = re.compile(r"\s*")


def _syntax_error(text: str, pos: int, message: str) -> PassError:
    """An error at ``text[pos]``, shown as mlir-opt shows it: position, line, caret."""
    first = text.rfind("\n", 0, pos) + 1
    last = text.find("\n", pos)
    line, col = text.count("\n", 0, pos) + 1, pos - first + 1
    source = text[first:last if last >= 0 else len(text)]
    return PassError(None, f"{_PIPELINE_BUFFER}:{line}:{col}: error: {message}\n{source}\n"
                           f"{' ' * (col - 1)}^")


def _parse_pipeline_text(text: str) -> list[_Parsed]:
    """The structure of ``a{opts},op(b,c)`` (names unresolved), scanned without recursion
    the way MLIR's ``TextualPipeline::parsePipelineText`` scans it."""
    top: list[_Parsed] = []
    stack = [top]
    pos = 0
    while True:
        m = _SEPARATOR.search(text, pos)
        end = m.start() if m else len(text)
        raw = text[pos:end]
        element = _Parsed(raw.strip(), pos + len(raw) - len(raw.lstrip()))
        stack[-1].append(element)
        if m is None:
            break
        pos = end
        if text[pos] == "(":
            if len(stack) > MAX_PIPELINE_DEPTH:
                raise _syntax_error(text, pos, "pass pipeline nested too deeply (more than "
                                               f"{MAX_PIPELINE_DEPTH} op anchors)")
            element.nested = []
            stack.append(element.nested)
            pos += 1
            continue
        if text[pos] == "{":
            pos = _read_options(text, pos, element)
        pos = _close_pipelines(text, pos, stack)
        if pos >= len(text):
            break
        if text[pos] != ",":
            raise _syntax_error(text, pos, "expected ',' after parsing pipeline")
        pos += 1
    if len(stack) > 1:
        raise _syntax_error(text, pos, "encountered unbalanced parentheses while parsing "
                                       "pipeline")
    return top


def _read_options(text: str, pos: int, element: _Parsed) -> int:
    """Store the options of ``{...}`` at ``pos`` (braces nest) in ``element``; returns
    the position after them and any spaces."""
    depth = 0
    for close in range(pos, len(text)):
        depth += {"{": 1, "}": -1}.get(text[close], 0)
        if depth == 0:
            element.options = text[pos + 1:close]
            return _SPACE.match(text, close + 1).end()
    raise _syntax_error(text, pos, "missing closing '}' while processing pass options")


def _close_pipelines(text: str, pos: int, stack: list[list[_Parsed]]) -> int:
    """Leave a nested pipeline for each ``)`` at ``pos``; returns the position after them."""
    while pos < len(text) and text[pos] == ")":
        if len(stack) == 1:
            raise _syntax_error(text, pos, "encountered extra closing ')' creating unbalanced "
                                           "parentheses while parsing pipeline")
        stack.pop()
        pos = _SPACE.match(text, pos + 1).end()
    return pos


def _resolve(parsed: list[_Parsed], text: str) -> None:
    """Check that every pass name is registered (before any pass is built, as MLIR does)."""
    for element in parsed:
        if element.nested is not None:
            _resolve(element.nested, text)
            continue
        try:
            pass_class(element.name)
        except PassError as e:
            raise _syntax_error(text, element.pos, e.message) from None


def _build(parsed: list[_Parsed], anchor: str | None) -> list[PipelineElement]:
    """Pipeline elements for passes meant to run on ``anchor`` ops (None: any, nesting
    implicitly); a pass anchored elsewhere is an error, in mlir-opt's words."""
    elements = []
    for element in parsed:
        if element.nested is None:
            elements.append(PipelineElement(pass_=_add_pass(element, anchor)))
            continue
        try:
            nested = _build(element.nested, element.name)
        except PassError as e:
            raise PassError(None, f"{e.message}\nfailed to add `{element.name}` with options "
                                  "`` to inner pipeline") from None
        elements.append(PipelineElement(op_name=element.name, nested=tuple(nested)))
    return elements


def _add_pass(element: _Parsed, anchor: str | None) -> Pass:
    cls = pass_class(element.name)
    failed = f"failed to add `{element.name}` with options `{element.options}`"
    try:
        pass_ = make_pass(element.name, element.options)
    except PassError as e:
        raise PassError(None, f"{e.message}\n{failed}") from None
    if anchor is not None and cls.ANCHOR not in (anchor, "any"):
        raise PassError(None, f"Can't add pass '{cls.__name__}' restricted to '{cls.ANCHOR}' "
                              f"on a PassManager intended to run on '{anchor}', did you intend "
                              f"to nest?\n{failed}")
    return pass_


# -- running -----------------------------------------------------------------------------

_FREEZE_LOCK = threading.Lock()
_freeze_depth = [0]  # pipelines running in any thread, under the lock


@contextmanager
def _frozen_heap():
    """Objects alive when the outermost pipeline starts (the module, mostly) are left out of
    the cyclic collector's passes until it ends (``gc.freeze``): passes allocate as they go,
    and every full collection would walk the whole module again, which made a 100k-op
    propagation 10% slower than linear (``benchmarks/scale.py``). What the passes create and
    drop is still collected."""
    with _FREEZE_LOCK:
        if _freeze_depth[0] == 0:
            gc.freeze()
        _freeze_depth[0] += 1
    try:
        yield
    finally:
        with _FREEZE_LOCK:
            _freeze_depth[0] -= 1
            if _freeze_depth[0] == 0:
                gc.unfreeze()


def _refreeze_heap() -> None:
    """Between passes of a running pipeline, leave what the passes so far made and kept out
    of the collector's passes too (``gc.freeze`` again): each full collection would walk it
    all once more, and their number grows with the module, so a 64-layer propagation spent
    6% of its time there and none at 16 layers (``benchmarks/propagate.py``). Cycles that a
    later pass drops are collected after the pipeline ends, as the module's own are."""
    with _FREEZE_LOCK:
        if _freeze_depth[0]:
            gc.freeze()


class PassInstrumentation:
    """Hooks around each pass run (MLIR ``PassInstrumentation``): the IR printer and the
    timer of ``shardy-ref-opt``'s ``--mlir-print-ir-*`` and ``--mlir-timing`` flags."""

    def run_before_pass(self, p: Pass, op: Operation) -> None:
        pass

    def run_after_pass(self, p: Pass, op: Operation) -> None:
        pass

    def run_after_pass_failed(self, p: Pass, op: Operation) -> None:
        pass


def pipeline_text(elements: list[PipelineElement], anchor: str = TOP_ANCHOR) -> str:
    """A pipeline as ``--pass-pipeline`` spells it: ``builtin.module(a,func.func(b{x=1}))``
    (MLIR ``OpPassManager::printAsTextualPipeline``)."""
    parts = []
    for element in elements:
        if element.pass_ is not None:
            parts.append(element.pass_.NAME + _options_text(element.pass_))
        else:
            parts.append(pipeline_text(list(element.nested), element.op_name))
    return f"{anchor}({','.join(parts)})"


def _options_text(p: Pass) -> str:
    if not dataclasses.is_dataclass(p):
        return ""
    items = []
    for f in dataclasses.fields(p):
        value = getattr(p, f.name)
        text = str(value).lower() if isinstance(value, bool) else str(value)
        items.append(f"{option_name(f.name)}={text}")
    return "{" + " ".join(items) + "}" if items else ""


_RUNNING: ContextVar[PassContext | None] = ContextVar("running_pass_context", default=None)


def running_pass_context() -> PassContext | None:
    """The context of the pipeline running in this thread, if any: what a helper deep in a
    pass (a sharding rule lookup) reads the run's options from without every pass passing
    its context along."""
    return _RUNNING.get()


class PassManager:
    """Runs a pipeline on a module, verifying the IR after each pass that changed it (as
    mlir-opt does, which skips passes that preserved all analyses)."""

    def __init__(self, pipeline: list[PipelineElement], verify=None, instrumentations=()):
        self.pipeline = pipeline
        self.verify = verify
        self.instrumentations = tuple(instrumentations)
        # id(op) -> (op, the change count after verifying it, its snapshot when cross-checking)
        self._verified: dict[int, tuple[Operation, int, tuple | None]] = {}
        # after each pass the change count deems harmless, check with a snapshot that it was
        self._cross_check = cross_checking()

    def run(self, module: Operation, ctx: PassContext) -> None:
        running = _RUNNING.set(ctx)
        try:
            with _frozen_heap(), pipeline_memos():
                self._run_elements(self.pipeline, module, ctx)
        finally:
            self._verified.clear()
            _RUNNING.reset(running)

    def _run_elements(self, elements, op: Operation, ctx: PassContext) -> None:
        for element in elements:
            if element.pass_ is not None:
                self._run_pass(element.pass_, op, ctx)
            else:
                with symbols_fixed(op):
                    for target in _ops_named(op, element.op_name):
                        self._run_elements(element.nested, target, ctx)

    def _run_pass(self, p: Pass, op: Operation, ctx: PassContext) -> None:
        if isinstance(p, PassPipeline):
            self._run_elements(p.elements(), op, ctx)
            return
        targets = [op] if p.ANCHOR in (op.name, "any") else list(_ops_named(op, p.ANCHOR))
        errors: list[ShardyRefError] = []
        collect = errors if len(targets) != 1 else None
        with symbols_fixed(op) if targets != [op] else nullcontext():
            for target in targets:
                self._run_on(p, target, ctx, collect)
        if errors:
            first = errors[0]
            first.others = [*getattr(first, "others", ()), *errors[1:]]
            raise first
        if self.verify is not None:
            self._verify_if_changed(p, op)
        _refreeze_heap()

    def _run_on(self, p: Pass, target: Operation, ctx: PassContext,
                errors: list[ShardyRefError] | None) -> None:
        """Run ``p`` on one target between the instrumentations' hooks. A failure is raised,
        or appended to ``errors`` when given: MLIR runs a nested pass on every op, then
        fails."""
        for i in self.instrumentations:
            i.run_before_pass(p, target)
        try:
            with blame(p.NAME, target):
                p.run(target, ctx)
        except ShardyRefError as e:
            for i in self.instrumentations:
                i.run_after_pass_failed(p, target)
            if errors is None:
                raise
            errors.append(e)
        else:
            for i in self.instrumentations:
                i.run_after_pass(p, target)

    def _verify_if_changed(self, p: Pass, op: Operation) -> None:
        """Verify ``op`` after ``p`` unless no IR changed since it was last verified (MLIR
        skips the verifier after a pass that preserved all analyses; ours declare nothing,
        so the IR counts its changes: :func:`~shardy_ref.ir.change_count.change_count`).
        A constant-time test: a walk comparing snapshots of the IR after every pass cost a
        tenth of a 64-layer propagation (``benchmarks/propagate.py``)."""
        with collector_paused(promote=False):  # the verifier's memo, the snapshot: no garbage
            verified = self._verified.get(id(op))
            if verified is not None and verified[1] == change_count():
                if verified[2] is not None and not unchanged_since(verified[2], op):
                    raise IRError(f"{p.NAME} changed the IR without the change count "
                                  "noticing: a change made outside the IR API")
                return
            with blame(f"the verifier after {p.NAME}", op):
                self.verify(op)
            snapshot = ir_snapshot(op) if self._cross_check else None
            # op is kept alive, so its id stays its own
            self._verified[id(op)] = (op, change_count(), snapshot)


@contextmanager
def blame(where: str | None = None, op: Operation | None = None, location=None):
    """Record on a Python exception (a bug, not a :class:`ShardyRefError`) leaving the block
    what was running: ``where`` (a pass name, "the parser"), the ``op`` it ran on, a fallback
    ``location``. The innermost record wins; command lines report it (exit 70), while
    library callers and tests still get the exception itself."""
    try:
        yield
    except ShardyRefError:
        raise
    except Exception as e:
        for key, value in (("where", where), ("op", op), ("location", location)):
            if value is not None and getattr(e, f"shardy_ref_{key}", None) is None:
                with suppress(AttributeError):
                    setattr(e, f"shardy_ref_{key}", value)
        raise


def _ops_named(op: Operation, name: str):
    """Ops named ``name`` directly nested in ``op``'s regions (a pass-manager nesting level)."""
    for region in op.regions:
        for block in region.blocks:
            for child in block:
                if child.name == name:
                    yield child
