"""Ops of the builtin and func dialects (https://mlir.llvm.org/docs/Dialects/Func/)."""
from shardy_ref.ir.opdefs import register

register("builtin.module", "IsolatedFromAbove Symbol", inherent=("sym_name", "sym_visibility"))
register("func.func", "IsolatedFromAbove Symbol",
         inherent=("arg_attrs", "function_type", "no_inline", "res_attrs", "sym_name",
                   "sym_visibility"))
register("func.call", inherent=("arg_attrs", "callee", "no_inline", "res_attrs"))
register("func.return", "Pure Terminator")
