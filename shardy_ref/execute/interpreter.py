"""The interpreter: runs functions of a module op by op, each op by its kernel.

Like StableHLO's reference interpreter (``stablehlo/reference/Ops.cpp``, ``eval``), a
function call binds the arguments, runs the ops of its body in order and returns the
operands of its terminator; regions (``while``, ``reduce``...) are run by their op's kernel
through :meth:`Interpreter.run_region`. Unlike it, values may be varying over a batch of
processes (:mod:`shardy_ref.execute.values`), so one run serves every process of an SPMD
program. Each block is compiled once into a plan (kernel and operands per op).
"""
from __future__ import annotations

import math
import os
import sys
import threading

import numpy as np

from shardy_ref.execute import compaction
from shardy_ref.execute.context import Context
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.kernels.quant import route as route_quantized
from shardy_ref.execute.registry import load_kernels
from shardy_ref.execute.values import Tensor, Token, TupleValue
from shardy_ref.ir.diagnostics import EntryFunctionError
from shardy_ref.ir.module import Module
from shardy_ref.ir.types import RankedTensorType, TokenType
from shardy_ref.ir.utils import entry_function

TERMINATORS = frozenset({"func.return", "stablehlo.return", "sdy.return"})


def _default_memory_budget() -> int:
    """Half of the machine's available memory (``MemAvailable``; the physical memory where
    the system does not say): the simulator's default budget."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 // 2
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8 << 30


class Interpreter:
    """Runs the functions of one ``builtin.module`` op.

    ``vectorize=False`` makes ``interpreter.run_parallel`` run every process in its own
    thread (the per-process fallback) even where one vectorized run would do; results are
    identical, which the tests check. ``stdout`` receives ``interpreter.print`` output;
    ``probe_dir`` is where ``interpreter.probe`` writes (``--probe-output-dir``). ``plans``
    (a dict, initially empty) keeps block plans across interpreters of the same module,
    reused while a block is unchanged.
    """

    def __init__(self, module_op, *, stdout=None, probe_dir: str | None = None,
                 vectorize: bool = True, memory_budget: int | None = None,
                 plans: dict | None = None):
        self.module = Module(module_op)
        self.kernels = load_kernels()
        self.stdout = stdout if stdout is not None else sys.stdout
        self.lock = threading.Lock()  # output and probe files, shared by process threads
        self.probe_dir = probe_dir
        self.probe_count = 0
        self.vectorize = vectorize
        self.memory_budget = memory_budget if memory_budget is not None \
            else _default_memory_budget()
        self._plans: dict = {}
        # block -> (block_stamp, plan) shared by the interpreters of one module (api.run)
        self.shared_plans = plans
        self.constants: dict = {}  # constant op -> its Tensor, converted once
        self._names: dict = {}  # func op -> NameState, for interpreter.print

    # -- entry points ----------------------------------------------------------------------
    def entry_function(self, name: str = "main"):
        """The function ``name``; with the default name, also the module's only function
        (the reference interpreter's ``getMainFunction``:
        :func:`~shardy_ref.ir.utils.entry_function`), as an :class:`InterpreterError`."""
        try:
            return entry_function(self.module.op, None if name == "main" else name)
        except EntryFunctionError as e:
            raise InterpreterError(e.location, e.message) from None

    def run(self, function: str = "main", args=()) -> list:
        """Run ``function`` on one process with run-time values ``args``."""
        return self.run_args(self.entry_function(function), list(args))

    def run_args(self, func, args: list) -> list:
        """Run ``func`` after checking ``args`` against its signature (the reference's
        ``validateEntrySignature``)."""
        block = func.regions[0].blocks[0] if func.regions and func.regions[0].blocks else None
        expected = [a.type for a in block.args] if block is not None else \
            list(func.attributes["function_type"].value.inputs)
        if len(args) != len(expected):
            raise InterpreterError(func.location, "incorrect number of arguments specified, "
                                   f"provided {len(args)} inputs but function expected "
                                   f"{len(expected)}")
        for i, (want, value) in enumerate(zip(expected, args, strict=True)):
            got = getattr(value, "type", None)
            if isinstance(value, Token) and isinstance(want, TokenType):
                continue
            if not _matches(want, got):
                raise InterpreterError(func.location, f"invalid input argument type at index "
                                       f"{i}, input type was {got} but entry function "
                                       f"expected {want}")
        with np.errstate(all="ignore"):  # the spec defines every such result (NaN, inf)
            return self.call_function(Context(self), func, list(args))

    def value_name(self, value) -> str:
        """The name MLIR's printer gives ``value`` within its function (``%0``, ``%arg1``)."""
        from shardy_ref.parser.names import NameState

        op = value.defining_op or value.owner_op
        while op is not None and op.name != "func.func":
            op = op.parent_op
        if op is None:
            return "%<value>"
        names = self._names.get(op)
        if names is None:
            names = self._names[op] = NameState(op)
        return names.use(value)

    def call(self, ctx: Context, name: str, args: list, location=None) -> list:
        func = self.module.lookup(name)
        if func is None or func.name != "func.func":
            raise InterpreterError(location, f"no function named @{name}")
        return self.call_function(ctx, func, args)

    def call_function(self, ctx: Context, func, args: list) -> list:
        region = func.regions[0] if func.regions else None
        name = func.attributes["sym_name"].value
        if region is None or not region.blocks:
            raise InterpreterError(func.location, f"function @{name} has no body to run")
        block = region.blocks[0]
        if len(block.args) != len(args):
            raise InterpreterError(func.location, f"@{name} takes {len(block.args)} arguments, "
                                   f"got {len(args)}")
        _check_argument_types(func, block, args)
        # A call runs in a fresh scope: its body cannot see the caller's values.
        inner = ctx.replace(env={}, lifting=False, index=None)
        return self._run_block(inner, block, args)

    def run_region(self, ctx: Context, region, args: list) -> list:
        """Run a single-block region of the current function with block arguments ``args``;
        returns the terminator's operand values."""
        if len(region.blocks) != 1:
            raise InterpreterError(None, f"a region with {len(region.blocks)} blocks cannot "
                                   "be interpreted (StableHLO regions have one block)")
        block = region.blocks[0]
        if len(block.args) != len(args):
            raise InterpreterError(None, f"region takes {len(block.args)} arguments, got "
                                   f"{len(args)}")
        return self._run_block(ctx, block, args)

    # -- the loop --------------------------------------------------------------------------
    def _plan(self, block) -> list:
        """Per op of ``block``: its kernel, operands, static result bytes, and the values
        of this block that die with it (so a run holds only live values, as a compiled
        program's buffers would)."""
        plan = self._plans.get(block)
        if plan is None:
            plan = self._plans[block] = self._build_plan(block) if self.shared_plans is None \
                else self._shared_plan(block)
        return plan

    def _build_plan(self, block) -> list:
        plan = []
        for op in block:
            if op.name in TERMINATORS:
                plan.append((op, None, op.operands, 0, (), False))
                break
            fn = route_quantized(op, self.kernels.get(op.name, _unsupported))
            plan.append((op, fn, op.operands, _static_bytes(op), ()))
        deaths = value_deaths(block, [step[0] for step in plan])
        return [(*step[:4], deaths.get(i, ()), step[1] is not None and
                 compaction.process_agnostic(step[0])) for i, step in enumerate(plan)]

    def _shared_plan(self, block) -> list:
        """The plan kept in ``shared_plans`` from an earlier run, if the block is still as
        it was then (:func:`block_stamp`), else a new one (kept unless it names an op with
        no kernel yet: a kernel registered later would change it)."""
        stamp = block_stamp(block)
        kept = self.shared_plans.get(block)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        plan = self._build_plan(block)
        if all(step[1] is not _unsupported for step in plan):
            self.shared_plans[block] = (stamp, plan)
        return plan

    def _run_block(self, ctx: Context, block, args: list) -> list:
        env = ctx.env
        lift = ctx.lifting
        batch_size = math.prod(ctx.batch_shape)  # the memory check's factor, once per block
        for arg, value in zip(block.args, args, strict=True):
            env[arg] = value
        compact = ctx.layout is not None and ctx.active is None and not lift \
            and ctx.nb == ctx.layout.ndim
        for op, fn, operands, nbytes, dead, agnostic in self._plan(block):
            args = [env[v] for v in operands]
            if lift:
                args = [ctx.lift(a) for a in args]
            if fn is None:
                return args
            if nbytes and ctx.batch_shape:
                self._check_memory(op, nbytes * batch_size)
            _bind(ctx, op, _run_op(ctx, op, fn, args, compact and agnostic), env)
            for value in dead:
                env.pop(value, None)
        raise InterpreterError(block.parent_op.location if block.parent_op else None,
                               "block has no terminator")

    def _check_memory(self, op, nbytes: int) -> None:
        if nbytes > self.memory_budget:
            raise InterpreterError(op.location, f"'{op.name}' would need {_gib(nbytes)} for its "
                                   f"results, over the memory budget of "
                                   f"{_gib(self.memory_budget)}")

    def write(self, text: str) -> None:
        with self.lock:
            self.stdout.write(text)
            self.stdout.flush()


def _run_op(ctx: Context, op, fn, args: list, compact: bool):
    """Runs one op's kernel (with ``compact``, once per distinct copy along the batch
    dimensions its operands share); any failure becomes an :class:`InterpreterError` at
    the op's location."""
    try:
        shared = compaction.shared_dims(ctx, args) if compact else ()
        return compaction.run_once_per_copy(ctx, fn, op, args, shared) if shared \
            else fn(ctx, op, *args)
    except InterpreterError as e:
        if not e.location.is_known:
            e.location = op.location
        raise
    except MemoryError as e:
        raise InterpreterError(op.location, f"out of memory running '{op.name}'") from e
    except Exception as e:
        raise InterpreterError(op.location, f"internal error running '{op.name}': "
                               f"{type(e).__name__}: {e}") from e


def block_stamp(block) -> tuple:
    """Everything a block's plan is built from: per op, in order, the op, its name, operand
    values and result types, and the same for every block nested in it (a nested op's use
    of an outer value changes deaths); and the argument types. Equal stamps, equal plans."""
    parts = []
    stack = [block]
    while stack:
        b = stack.pop()
        parts.append(tuple(a.type for a in b.args))
        for op in b:
            parts.append((op, op.name, op.operands, tuple(r.type for r in op.results)))
            for region in op.regions:
                stack.extend(region.blocks)
    return tuple(parts)


def value_deaths(block, ops: list) -> dict:
    """Op index -> the values defined in ``block`` (arguments, results) last used by that
    op or by an op nested in its regions; a value never used dies where it is defined."""
    from shardy_ref.execute.regions import values_used

    last = {v: -1 for v in block.args}
    for i, op in enumerate(ops):
        for v in values_used(op):
            if v in last:
                last[v] = i
        for r in op.results:
            last[r] = i
    deaths: dict = {}
    for v, i in last.items():
        deaths.setdefault(max(i, 0), []).append(v)
    return {i: tuple(vs) for i, vs in deaths.items()}


def _matches(want, got) -> bool:
    """A run-time type fits a declared one (dynamic dimensions match any size)."""
    if not isinstance(want, RankedTensorType) or not isinstance(got, RankedTensorType):
        return want == got
    return want.element_type == got.element_type and len(want.shape) == len(got.shape) and \
        all(w is None or w == g for w, g in zip(want.shape, got.shape, strict=True))


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB"


def _static_bytes(op) -> int:
    total = 0
    for t in op.result_types:
        if isinstance(t, RankedTensorType) and t.has_static_shape:
            from shardy_ref.execute.dtypes import storage_dtype
            try:
                total += t.num_elements * storage_dtype(t.element_type).itemsize
            except KeyError:
                pass
    return total


def _unsupported(ctx, op, *args):
    raise InterpreterError(op.location, f"Unsupported op: '{op.name}' has no interpreter kernel")


def _bind(ctx: Context, op, out, env: dict) -> None:
    results = op.results
    if not results:
        return
    if len(results) == 1 and type(out) is Tensor and not out.batch \
            and _exact(out, results[0].type):
        env[results[0]] = out
        return
    if len(results) == 1 and not isinstance(out, (list, tuple)):
        out = (out,)
    if out is None or len(out) != len(results):
        raise InterpreterError(op.location, f"internal error: the kernel of '{op.name}' gave "
                               f"{0 if out is None else len(out)} results for {len(results)}")
    for result, value in zip(results, out, strict=True):
        _check_value(ctx, op, result.type, value)
        env[result] = value


_DTYPES: dict = {}  # element type -> its storage dtype (False: none), for _exact


def _exact(value: Tensor, type_) -> bool:
    """A uniform tensor holding exactly the static result type ``type_`` (the same object)
    passes :func:`_check_value`: the common case, checked without its general work."""
    if value.type is not type_ or type(type_) is not RankedTensorType:
        return False
    element = type_.element_type
    want = _DTYPES.get(element)
    if want is None:
        from shardy_ref.execute.dtypes import storage_dtype
        try:
            want = _DTYPES[element] = storage_dtype(element)
        except KeyError:
            want = _DTYPES[element] = False
    data = value.data
    return want is not False and data.shape == type_.shape and data.dtype == want


def _check_value(ctx: Context, op, type_, value) -> None:
    """Catch kernel bugs where they happen: a value must have its result's type."""
    if isinstance(value, Tensor):
        want = value.type
        ok = isinstance(type_, RankedTensorType) and len(want.shape) == len(type_.shape) and all(
            d is None or d == w for d, w in zip(type_.shape, want.shape, strict=True))
        lead = ctx.batch_shape[:value.batch] if value.batch else ()
        if ok and value.data.shape == lead + want.shape and value.batch <= ctx.nb:
            from shardy_ref.execute.dtypes import storage_dtype
            ok = value.data.dtype == storage_dtype(want.element_type)
        if not ok:
            raise InterpreterError(op.location, f"internal error: the kernel of '{op.name}' "
                                   f"gave {value.data.dtype}{list(value.data.shape)} "
                                   f"(batch {value.batch}) for {type_} (a result type the "
                                   "op's operands and attributes do not give, or a kernel "
                                   "bug)")
    elif not isinstance(value, (Token, TupleValue)):
        raise InterpreterError(op.location, f"internal error: the kernel of '{op.name}' gave "
                               f"a {type(value).__name__}")


def _check_argument_types(func, block, args: list) -> None:
    """A tensor passed to a function has the type its parameter declares (dynamic sizes
    match any): a call with other shapes would run the body on data its ops do not type."""
    for i, (param, value) in enumerate(zip(block.args, args, strict=True)):
        want, got = param.type, getattr(value, "type", None)
        if not isinstance(want, RankedTensorType) or not isinstance(got, RankedTensorType):
            continue
        if want.element_type != got.element_type or len(want.shape) != len(got.shape) or any(
                w is not None and w >= 0 and w != g for w, g in zip(want.shape, got.shape)):
            name = func.attributes["sym_name"].value
            raise InterpreterError(func.location, f"@{name} argument {i} has type {want}, "
                                   f"got a value of type {got}")
