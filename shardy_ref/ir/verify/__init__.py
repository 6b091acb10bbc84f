"""The verifier: run after parsing and after every pass, as mlir-opt does.

Verification follows MLIR's order (``mlir/lib/IR/Verifier.cpp``):

1. a walk of each op isolated from above (the module, then each function, ...): on
   entering an op, its discardable attributes (the dialect's ``verifyOperationAttribute``:
   ``sdy.sharding``, ``sdy.sharding_rule``, ...), then its own invariants (ODS
   constraints and ``verify()``; for ``func.func`` the argument and result attributes,
   ``verifyRegionArgAttribute``/``verifyRegionResultAttribute``); then each block (not
   empty on entry, ending with a terminator on exit) with the ops in it; on leaving the
   op, the checks of its regions (:data:`EXIT_VERIFIERS`, e.g. implicit terminators and
   inferred result types; isolation from above). Nested ops isolated from above are
   verified after the walk, each on its own, so one bad function does not hide
   another's errors; the first error ends a walk;
2. MLIR's core rules (dominance, unique symbols);
3. symbol uses (``verifySymbolUses``): the checks that need the meshes of the module,
   which upstream runs when the module's symbol table is verified.

Rules register themselves with the decorators below, keyed by op or attribute name, and
raise :class:`VerifyError` with upstream's message (spec 003 gives the rule IDs and texts).
"""
from __future__ import annotations

from collections.abc import Callable

from shardy_ref.ir.diagnostics import Diagnostic, VerifyError
from shardy_ref.ir.operation import Operation

# op name -> checks of the op's own invariants (phase 1)
OP_VERIFIERS: dict[str, list[Callable]] = {}
# discardable attribute name -> check(op, attr, ctx) (phase 1, before the op's invariants)
ATTR_VERIFIERS: dict[str, Callable] = {}
# func argument / result attribute name -> check(func_op, kind, index, attr, type, ctx)
# where kind is "arg" or "result"
FUNC_ATTR_VERIFIERS: dict[str, Callable] = {}
# op name -> checks of the op's symbol uses (phase 3)
SYMBOL_USE_VERIFIERS: dict[str, list[Callable]] = {}
# op name -> checks run when leaving the op, after its regions (MLIR ``verifyRegions``)
EXIT_VERIFIERS: dict[str, list[Callable]] = {}


def op_verifier(*names: str):
    def register(fn):
        for name in names:
            OP_VERIFIERS.setdefault(name, []).append(fn)
        return fn
    return register


def exit_verifier(*names: str):
    def register(fn):
        for name in names:
            EXIT_VERIFIERS.setdefault(name, []).append(fn)
        return fn
    return register


def attr_verifier(*names: str):
    def register(fn):
        for name in names:
            ATTR_VERIFIERS[name] = fn
        return fn
    return register


def func_attr_verifier(*names: str):
    def register(fn):
        for name in names:
            FUNC_ATTR_VERIFIERS[name] = fn
        return fn
    return register


def symbol_use_verifier(*names: str):
    def register(fn):
        for name in names:
            SYMBOL_USE_VERIFIERS.setdefault(name, []).append(fn)
        return fn
    return register


def op_error(op: Operation, message: str, notes: list[Diagnostic] | None = None) -> VerifyError:
    """``'sdy.all_gather' op <message>`` at the op, as MLIR's ``emitOpError`` writes it."""
    return VerifyError(op.location, f"'{op.name}' op {message}", notes)


def note(location, message: str) -> Diagnostic:
    return Diagnostic("note", location, message)


class VerifyContext:
    """What rules may consult besides the op: the module and its meshes."""

    def __init__(self, module: Operation):
        from shardy_ref.ir.symbols import SymbolTable

        self.module = module
        self.symbols = SymbolTable(module) if module.name == "builtin.module" else None

    def mesh_of(self, sharding):
        """The Mesh a TensorSharding is bound to (inline, or the named ``sdy.mesh``), or None."""
        from shardy_ref.ir.sdy_axes import Mesh

        ref = sharding.mesh_or_ref
        if isinstance(ref, Mesh):
            return ref
        if self.symbols is None:
            return None
        op = self.symbols.lookup(ref)
        if op is None or op.name != "sdy.mesh":
            return None
        mesh = op.attributes.get("mesh")
        return mesh if isinstance(mesh, Mesh) else None


def verify_module(module: Operation) -> None:
    """Raise the first VerifyError of ``module`` (its other errors become ``.others``)."""
    errors = collect_errors(module)
    if errors:
        first = errors[0]
        first.others = errors[1:]
        raise first


def collect_errors(module: Operation) -> list[VerifyError]:
    """Every error MLIR's verifier would report for ``module``, in its order."""
    from shardy_ref.ir.verify import core

    _load_rules()
    ctx = VerifyContext(module)
    errors: list[VerifyError] = []
    _verify_tree(module, ctx, errors)
    if errors:
        return errors
    try:
        core.verify_unique_symbols(module)
        for op in module.walk():
            for check in SYMBOL_USE_VERIFIERS.get(op.name, ()):
                check(op, ctx)
        core.verify_dominance(module)
    except VerifyError as e:
        return [e]
    return errors


def _verify_tree(root: Operation, ctx: VerifyContext, errors: list[VerifyError]) -> None:
    """Phase 1 for ``root`` (the module or an op isolated from above): walk it, then each
    op isolated from above found in it, independently (MLIR verifies those in parallel
    once the walk is done, and not at all if it failed)."""
    deferred: list[Operation] = []
    try:
        _walk(root, ctx, deferred)
    except VerifyError as e:
        errors.append(e)
        return
    for op in deferred:
        _verify_tree(op, ctx, errors)


def _walk(op: Operation, ctx: VerifyContext, deferred: list[Operation]) -> None:
    from shardy_ref.ir.opdefs import op_def
    from shardy_ref.ir.verify import core

    verify_op(op, ctx)
    for region in op.regions:
        for block in region.blocks:
            core.verify_block_entry(block)
            for child in block:
                d = op_def(child.name)
                if d is not None and d.isolated_from_above and child.regions:
                    deferred.append(child)
                else:
                    _walk(child, ctx, deferred)
            core.verify_block_exit(block)
    for check in EXIT_VERIFIERS.get(op.name, ()):
        check(op, ctx)
    d = op_def(op.name)
    if d is not None and d.isolated_from_above:
        core.verify_isolated(op)


def verify_op(op: Operation, ctx: VerifyContext) -> None:
    """Phase 1 for one op: its discardable attributes, its own invariants, then (for a
    function) the attributes of its arguments and results."""
    for name, attr in op.attributes.items():
        check = ATTR_VERIFIERS.get(name)
        if check is not None:
            check(op, attr, ctx)
    for check in OP_VERIFIERS.get(op.name, ()):
        check(op, ctx)
    if op.name == "func.func":
        _verify_func_attrs(op, ctx)


def _verify_func_attrs(func: Operation, ctx: VerifyContext) -> None:
    from shardy_ref.ir.builtin_attrs import ArrayAttr, DictionaryAttr

    ftype = getattr(func.attributes.get("function_type"), "value", None)
    if ftype is None:
        return
    for kind, key, types in (("arg", "arg_attrs", ftype.inputs),
                             ("result", "res_attrs", ftype.results)):
        dicts = func.attributes.get(key)
        if not isinstance(dicts, ArrayAttr):
            continue
        for index, (d, t) in enumerate(zip(dicts, types)):
            if not isinstance(d, DictionaryAttr):
                continue
            for name, attr in d.value:
                check = FUNC_ATTR_VERIFIERS.get(name)
                if check is not None:
                    check(func, kind, index, attr, t, ctx)


# rule modules, imported when the verifier first runs
_RULE_MODULES = ("core", "sharding", "collectives", "sdy_ops", "rules", "builtin_ops",
                 "chlo_ops")


def _load_rules() -> None:
    import importlib
    for name in _RULE_MODULES:
        importlib.import_module(f"shardy_ref.ir.verify.{name}")
