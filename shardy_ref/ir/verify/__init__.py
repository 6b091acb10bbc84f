"""The verifier: run after parsing and after every pass, as mlir-opt does.

Verification follows MLIR's order (``mlir/lib/IR/Verifier.cpp``):

1. walking ops in pre-order, each op's discardable attributes (the dialect's
   ``verifyOperationAttribute``: ``sdy.sharding``, ``sdy.sharding_rule``, ...), then the
   op's own invariants (ODS constraints and ``verify()``; for ``func.func`` the argument
   and result attributes, ``verifyRegionArgAttribute``/``verifyRegionResultAttribute``);
   an op that fails stops the walk of its isolated-from-above ancestor, but sibling
   functions are still verified, as MLIR verifies them independently;
2. MLIR's core rules (dominance, isolation from above, unique symbols);
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


def op_verifier(*names: str):
    def register(fn):
        for name in names:
            OP_VERIFIERS.setdefault(name, []).append(fn)
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


def _verify_tree(op: Operation, ctx: VerifyContext, errors: list[VerifyError]) -> bool:
    """Phase 1 over ``op`` and its nested ops, in pre-order. An error stops the walk up to
    the nearest op isolated from above; functions are verified independently, so one bad
    function does not hide another's errors. False when this subtree failed."""
    from shardy_ref.ir.opdefs import op_def
    from shardy_ref.ir.verify import core

    try:
        verify_op(op, ctx)
    except VerifyError as e:
        errors.append(e)
        return False
    ok = True
    for region in op.regions:
        for block in region.blocks:
            for child in block:
                d = op_def(child.name)
                if d is not None and d.isolated_from_above:
                    ok = _verify_tree(child, ctx, errors) and ok
                elif not _verify_tree(child, ctx, errors):
                    return False
    d = op_def(op.name)
    if ok and d is not None and d.isolated_from_above:
        try:
            core.verify_isolated(op)
        except VerifyError as e:
            errors.append(e)
            return False
    return ok


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
_RULE_MODULES = ("core", "sharding", "collectives", "sdy_ops", "rules", "builtin_ops")


def _load_rules() -> None:
    import importlib
    for name in _RULE_MODULES:
        importlib.import_module(f"shardy_ref.ir.verify.{name}")
