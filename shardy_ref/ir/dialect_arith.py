"""``arith.constant``, the one arith op upstream's tests use (sdy_opt registers the arith
dialect). See https://mlir.llvm.org/docs/Dialects/ArithOps/#arithconstant-arithconstantop."""
from shardy_ref.ir.builtin_attrs import IntegerAttr
from shardy_ref.ir.opdefs import register
from shardy_ref.ir.types import IntegerType


def _constant_name(op):
    """``ConstantOp::getAsmResultNames``: ``%true``/``%false`` for i1, ``%c<value>_<type>``
    for other integers (``%c<value>`` for index), ``%cst`` otherwise."""
    value = op.attributes.get("value")
    if not isinstance(value, IntegerAttr):
        return ["cst"]
    t = value.type
    if isinstance(t, IntegerType) and t.width == 1:
        return ["true" if value.value else "false"]
    return [f"c{value.value}_{t}" if isinstance(t, IntegerType) else f"c{value.value}"]


register("arith.constant", "ConstantLike Pure", inherent=("value",),
         result_names=_constant_name)
