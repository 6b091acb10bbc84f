"""Ops of the CHLO dialect ("client HLO": broadcasting binary ops, special functions,
``top_k``, ``ragged_dot``, ``scan``...): inherent attributes, purity and memory effects,
result and block argument names (the op families by syntax are in
:mod:`shardy_ref.ir.chlo_families`). See ``stablehlo/dialect/ChloOps.td`` at
https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/dialect/ChloOps.td

``chlo.top_k``'s ``is_stable`` is not inherent here: the oracle's CHLO (jaxlib 0.10.2,
StableHLO 1.17) predates it and prints it in the attr-dict, which we follow byte for byte.
"""
from shardy_ref.ir.chlo_families import ALL_OPS, BROADCAST_BINARY
from shardy_ref.ir.opdefs import register

_INHERENT = {
    **{name: ("broadcast_dimensions",) for name in BROADCAST_BINARY},
    "chlo.broadcast_compare": ("broadcast_dimensions", "compare_type", "comparison_direction"),
    "chlo.constant": ("value",),
    "chlo.constant_like": ("value",),
    "chlo.ragged_dot": ("precision_config", "ragged_dot_dimension_numbers"),
    "chlo.top_k": ("k",),
    "chlo.scan": ("dimension", "is_associative", "is_reverse", "operandSegmentSizes",
                  "resultSegmentSizes", "scan_dim_size"),
}


def _top_k_names(op):
    """MLIR names the results of multi-result ops after their ODS names."""
    return ["values", "indices"]


def _scan_arg_names(op, region_index):
    """``ScanOp::getAsmBlockArgumentNames``: ``%input`` for inputs, ``%carry`` for carries."""
    sizes = op.attributes.get("operandSegmentSizes")
    n_inputs = sizes.value[0] if sizes is not None else 0
    n = len(op.regions[region_index].blocks[0].args)
    return ["input" if i < n_inputs else "carry" for i in range(n)]


# op -> its traits the implementation consults: every CHLO op is Pure except scan, whose
# effects are its body's. (CHLO's ``Elementwise``/``BroadcastingElementwise`` are left out:
# Shardy sees CHLO only after XLA legalized it to StableHLO.)
_TRAITS = {"chlo.constant": "ConstantLike Pure",
           "chlo.scan": "IsolatedFromAbove RecursiveMemoryEffects"}

for _name in ALL_OPS:
    register(_name, _TRAITS.get(_name, "Pure"), inherent=_INHERENT.get(_name, ()),
             result_names=_top_k_names if _name == "chlo.top_k" else None,
             block_arg_names=_scan_arg_names if _name == "chlo.scan" else None)
