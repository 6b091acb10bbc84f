"""Ops of the builtin and func dialects (https://mlir.llvm.org/docs/Dialects/Func/)."""
from shardy_ref.ir.opdefs import register

register("builtin.module", inherent=("sym_name", "sym_visibility"), isolated_from_above=True,
         symbol=True)
register("func.func", inherent=("arg_attrs", "function_type", "no_inline", "res_attrs",
                                 "sym_name", "sym_visibility"),
         isolated_from_above=True, symbol=True)
register("func.call", inherent=("arg_attrs", "callee", "no_inline", "res_attrs"))
register("func.return", terminator=True, pure=True)
