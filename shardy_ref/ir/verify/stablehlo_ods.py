"""Two ODS constraints every StableHLO op's generated verifier checks before the op's own
``verify()``, kept as data here (from ``stablehlo/dialect/StablehloOps.td``):

- region block counts: a region declared ``SizedRegion<1>`` holds exactly one block
  (``region #1 ('branches') failed to verify constraint: region with 1 blocks``);
- token operands and results: only the ops declared with ``HLO_Token`` /
  ``HLO_TensorOrToken...`` operands take ``!stablehlo.token``; every other op's operands
  and results are ``HLO_Tensor`` and a token is rejected with its summary.

These run after every other check of the op (the module loads last): an op whose own
checks know its exact ODS operand constraint (the elementwise ops, batch norms...) rejects a
token first with that constraint's summary; these catch the rest.
"""
from __future__ import annotations

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import TokenType, TupleType
from shardy_ref.ir.verify import VerifyContext, op_error, op_verifier

# op -> the names of its regions, all SizedRegion<1> (a variadic one repeats its name)
SIZED_REGIONS = {
    "case": ("branches",), "if": ("true_branch", "false_branch"), "while": ("cond", "body"),
    "reduce": ("body",), "sort": ("comparator",), "scatter": ("update_computation",),
    "map": ("computation",), "reduce_window": ("body",),
    "select_and_scatter": ("select", "scatter"), "all_reduce": ("computation",),
    "reduce_scatter": ("computation",),
}

# ops whose operands or results may be tokens (or tuples holding them)
TAKES_TOKENS = frozenset("""after_all create_token send recv infeed outfeed tuple
get_tuple_element optimization_barrier while if case return custom_call composite
add_dependency async_start async_done""".split())

HLO_TENSOR = ("ranked tensor of 4/6/8/16/32/64-bit float or bool or 2/4/8/16/32/64-bit "
              "integer or complex type with 32/64-bit float elements or per-tensor integer "
              "quantized values")

def _names() -> tuple[str, ...]:
    from shardy_ref.ir.opdefs import OPS, op_def

    op_def("stablehlo.add")  # the dialects register their ops on first use
    return tuple(name for name in OPS if name.startswith("stablehlo."))


def verify_sized_regions(op: Operation, ctx: VerifyContext) -> None:
    names = SIZED_REGIONS.get(op.name.removeprefix("stablehlo."))
    if names is None:
        return
    for i, region in enumerate(op.regions):
        if len(region.blocks) != 1:
            name = names[min(i, len(names) - 1)]
            raise op_error(op, f"region #{i} ('{name}') failed to verify constraint: region "
                               "with 1 blocks")


def _is_token(t) -> bool:
    return isinstance(t, TokenType) or (isinstance(t, TupleType) and
                                        any(_is_token(e) for e in t.types))


def verify_no_tokens(op: Operation, ctx: VerifyContext) -> None:
    if op.name.removeprefix("stablehlo.") in TAKES_TOKENS:
        return
    for kind, types in (("operand", op.operand_types), ("result", op.result_types)):
        for i, t in enumerate(types):
            if _is_token(t):
                raise op_error(op, f"{kind} #{i} must be {HLO_TENSOR}, but got '{t}'")


for _name in _names():
    op_verifier(_name)(verify_sized_regions)
    op_verifier(_name)(verify_no_tokens)
