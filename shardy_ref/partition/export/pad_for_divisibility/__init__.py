"""``sdy-pad-for-divisibility``: pad every tensor whose sharding does not divide a dimension
up to the next multiple of its shard count, so each device later holds an equal shard
(upstream ``export/pad_for_divisibility.cc``, pass ``PadForDivisibilityPass`` in
``export/passes.td``).

Upstream runs it as an MLIR partial dialect conversion; this module replays that driver:
ops are visited in pre-order, an illegal op (one touching a value whose padded type
differs from its type) is rewritten by its pattern (:mod:`.patterns`) on its operands as
already converted, old results are replaced only at the end, and a value whose consumer
was left alone but whose replacement has another type goes through an
``builtin.unrealized_conversion_cast`` as upstream's materializations do. Function inputs
and outputs must already be divisible.

Where upstream would emit a program that no longer verifies or computes the wrong values,
this pass differs: ``sdy.collective_permute`` is padded like the other collectives, a
partially gathered dimension is sliced back to its padded (not original) size, and padding
or slicing a dimension that is sharded (which would move data between devices) is an error.
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import BlockArgument, Operation, Value
from shardy_ref.ir.symbols import SymbolTable, symbol_table
from shardy_ref.ir.value_sharding import get_func_result_sharding, get_sharding
from shardy_ref.partition.export.lowering import Builder
from shardy_ref.partition.export.pad_for_divisibility.padding import is_legal_type, is_legal_value
from shardy_ref.partition.export.pad_for_divisibility.patterns import (
    PADDED_DIALECTS,
    Rewriter,
    pattern_for,
)
from shardy_ref.pass_manager import Pass, PassContext, register_pass

CAST = "builtin.unrealized_conversion_cast"
_OUT_SHARDING_OPERAND = frozenset({"sdy.all_slice", "sdy.reduce_scatter"})
# ``sdy.collective_permute`` is not in upstream's list: there a padded operand reaches it
# through an unrealized cast and the result no longer verifies; padding it generically is
# exact, since it moves whole shards and keeps each dimension's shard count
# ``sdy.constant`` neither: left alone it reaches the global-to-local conversion with a
# non-divisible type
_VALUES_CHECKED = frozenset({"sdy.all_to_all", "sdy.all_reduce", "sdy.sharded_to_unreduced",
                             "sdy.replicated_to_unreduced", "sdy.collective_permute",
                             "sdy.constant"})


def is_legal(op: Operation, table: SymbolTable) -> bool:
    """Upstream's conversion target: StableHLO ops and some sdy collectives are legal when
    all their values have divisible types; other ops always are."""
    if op.name in _OUT_SHARDING_OPERAND:
        return is_legal_type(op.operands[0].type, op.attributes.get("out_sharding"), table)
    if op.name == "sdy.all_gather":
        return all(is_legal_value(v, table) for v in op.operands)
    if op.dialect in PADDED_DIALECTS or op.name in _VALUES_CHECKED:
        return all(is_legal_value(v, table) for v in (*op.results, *op.operands))
    return True


def check_function_io(func: Operation, table: SymbolTable) -> None:
    """Upstream ``FuncOpPattern``: function inputs and outputs must be divisible."""
    block = func.regions[0].blocks[0] if func.regions and func.regions[0].blocks else None
    message = None
    for i, arg in enumerate(block.args if block is not None else ()):
        if not is_legal_value(arg, table):
            message = f"argument #{i} has a non-divisible sharding."
            break
    if message is None:
        results = func.attributes["function_type"].value.results
        for i, t in enumerate(results):
            if not is_legal_type(t, get_func_result_sharding(func, i), table):
                message = f"result #{i} has a non-divisible sharding."
                break
    if message is None:
        return
    error = PassError(func.location, f"'func.func' op {message} Shardy expects function IO "
                      "to be divisible.")
    error.others = [PassError(func.location, "failed to legalize operation 'func.func' that "
                              "was explicitly marked illegal")]
    raise error


@dataclass(slots=True)
class Conversion:
    """One function's conversion: old value -> replacement, and the ops replaced."""

    rewriter: Rewriter
    mapping: dict[Value, Value]
    replaced: list[Operation]

    def adapt(self, op: Operation) -> list[Value]:
        """The operands of ``op`` as converted (upstream's adaptor): each old value's
        replacement, cast to the padded type of the old value where they differ."""
        out = []
        for old in op.operands:
            new = self.mapping.get(old, old)
            want = self.rewriter.padded(old.type, get_sharding(old))
            if new.type != want:
                new = Builder(op).op(CAST, [new], [want]).results[0]
            out.append(new)
        return out

    def convert(self, op: Operation) -> None:
        apply = pattern_for(op)
        values = apply(self.rewriter, op, self.adapt(op)) if apply is not None else None
        if values is None:
            raise PassError(op.location, f"failed to legalize operation '{op.name}' that was "
                            "explicitly marked illegal")
        self.mapping.update(zip(op.results, values))
        self.replaced.append(op)

    def finish(self) -> None:
        """Hand the replacements to the ops left alone, then erase the replaced ops."""
        gone = set(self.replaced)
        for op in self.replaced:
            for old in op.results:
                new = self.mapping[old]
                cast = None
                for use in old.uses:
                    if use.owner in gone:
                        continue
                    if new.type != old.type and cast is None:
                        cast = _source_cast(new, old.type)
                    use.set(new if cast is None else cast)
        for op in reversed(self.replaced):
            op.erase()
        for loop in self.rewriter.loops:
            retype_loop_arguments(loop)


def retype_loop_arguments(loop: Operation) -> None:
    """Give the block arguments of a padded ``stablehlo.while`` its operands' padded types
    (a region signature conversion). The casts the converted ops inside put on them become
    no-ops and go; an op left alone still sees the unpadded type through a cast."""
    types = [v.type for v in loop.operands]
    for region in loop.regions:
        for arg, padded in zip(region.blocks[0].args, types, strict=True):
            if arg.type == padded:
                continue
            old, arg.type = arg.type, padded
            casts = [u.owner for u in arg.uses
                     if u.owner.name == CAST and u.owner.results[0].type == padded]
            left_alone = [u for u in arg.uses if u.owner not in casts]
            if left_alone:
                cast = _source_cast(arg, old)
                for use in left_alone:
                    use.set(cast)
            for op in casts:
                op.results[0].replace_all_uses_with(arg)
                op.erase()


def _source_cast(value: Value, type_) -> Value:
    """``value`` cast back to ``type_`` right after its definition (a source
    materialization)."""
    cast = Operation(CAST, [value], [type_])
    if isinstance(value, BlockArgument):
        block = value.block
        if block.first_op is None:
            block.append(cast)
        else:
            block.insert_before(block.first_op, cast)
    else:
        cast.location = value.op.location
        value.op.parent.insert_after(value.op, cast)
    return cast.results[0]


def pad_function(func: Operation, table: SymbolTable) -> None:
    check_function_io(func, table)
    conversion = Conversion(Rewriter(table), {}, [])
    for op in list(func.walk())[1:]:
        if not is_legal(op, table):
            conversion.convert(op)
    conversion.finish()


@register_pass
@dataclass(frozen=True, slots=True)
class PadForDivisibilityPass(Pass):
    """Pads tensors with non-divisible shardings to divisible shapes."""

    NAME = "sdy-pad-for-divisibility"
    ANCHOR = "func.func"

    def run(self, op: Operation, ctx: PassContext) -> None:
        pad_function(op, symbol_table(op.parent_op))
