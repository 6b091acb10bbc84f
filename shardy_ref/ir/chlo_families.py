"""The CHLO ops by syntax family (``ChloOps.td``): names only, no registration, so the
grammar, printer, verifier and interpreter can share them without loading the dialects."""
from __future__ import annotations

# `$lhs, $rhs attr-dict : (T, T) -> R`, with an optional broadcast_dimensions
BROADCAST_BINARY = tuple(f"chlo.broadcast_{n}" for n in """add and atan2 complex compare
divide maximum minimum multiply next_after or polygamma power remainder shift_left
shift_right_arithmetic shift_right_logical subtract xor zeta""".split())
# `$operand attr-dict : T -> R`
UNARY = tuple(f"chlo.{n}" for n in """_asin_acos_kernel acos acosh asin asinh atan atanh
bessel_i1e conj cosh digamma erf erf_inv erfc is_inf is_neg_inf is_pos_inf lgamma sinh
square tan""".split())
# `$a, $b attr-dict : T, T -> R` (not broadcasting)
BINARY = ("chlo.next_after", "chlo.polygamma", "chlo.zeta", "chlo.mulhi")
OTHERS = ("chlo.broadcast_select", "chlo.constant", "chlo.constant_like", "chlo.ragged_dot",
          "chlo.top_k", "chlo.scan")
ALL_OPS = BROADCAST_BINARY + UNARY + BINARY + OTHERS
