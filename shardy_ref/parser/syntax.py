"""Which op names have which pretty syntax: the tables both the grammar and the printer use.

Each key of :data:`OP_TERMINALS` is a lexer terminal matching the listed op names; the
grammar rule that starts with that terminal defines the syntax, and the printer module
registers a printer for the same names. Keeping the lists here keeps the two in step.
"""
from __future__ import annotations


def _chlo_terminals() -> dict[str, list[str]]:
    from shardy_ref.ir.chlo_families import BINARY, BROADCAST_BINARY, UNARY
    return {"CHLO_UNARY": list(UNARY), "CHLO_BINARY": list(BINARY),
            "CHLO_BROADCAST": [*BROADCAST_BINARY, "chlo.broadcast_select"],
            "CHLO_CONSTANT": ["chlo.constant"], "CHLO_TOP_K": ["chlo.top_k"],
            "CHLO_SCAN": ["chlo.scan"]}


CHLO_TERMINALS = _chlo_terminals()


def _shlo(*names: str) -> list[str]:
    return [f"stablehlo.{n}" for n in names]


OP_TERMINALS: dict[str, list[str]] = {
    "MODULE": ["module", "builtin.module"],
    "FUNC_FUNC": ["func.func"],
    "FUNC_CALL": ["func.call", "call"],
    "RETURN": ["return", "func.return"],
    "ARITH_CONSTANT": ["arith.constant"],
    "SDY_MESH": ["sdy.mesh"],
    "SDY_SHARDING_OP": ["sdy.sharding_constraint", "sdy.reshard"],
    "SDY_PROPAGATION_BARRIER": ["sdy.propagation_barrier"],
    "SDY_SHARDING_GROUP": ["sdy.sharding_group"],
    "SDY_CONSTANT": ["sdy.constant"],
    "SDY_DATA_FLOW_EDGE": ["sdy.data_flow_edge"],
    "SDY_FUNC_DATA_FLOW_EDGE": ["sdy.func_data_flow_edge"],
    "SDY_MANUAL_COMPUTATION": ["sdy.manual_computation"],
    "SDY_NAMED_COMPUTATION": ["sdy.named_computation"],
    "SDY_RETURN": ["sdy.return"],
    "SDY_GATHER_LIKE": ["sdy.all_gather", "sdy.all_slice", "sdy.sharded_to_unreduced"],
    "SDY_ALL_TO_ALL": ["sdy.all_to_all"],
    "SDY_COLLECTIVE_PERMUTE": ["sdy.collective_permute"],
    "SDY_ALL_REDUCE": ["sdy.all_reduce"],
    "SDY_REDUCE_SCATTER": ["sdy.reduce_scatter"],
    "SDY_REPLICATED_TO_UNREDUCED": ["sdy.replicated_to_unreduced"],
    "SHLO_CONSTANT": _shlo("constant"),
    "SHLO_SLICE": _shlo("slice"),
    "SHLO_GET_TUPLE_ELEMENT": _shlo("get_tuple_element"),
    "SHLO_CUSTOM_CALL": _shlo("custom_call"),
    "SHLO_OPTIMIZATION_BARRIER": _shlo("optimization_barrier"),
    "SHLO_COMPOSITE": _shlo("composite"),
    "SHLO_CONVOLUTION": _shlo("convolution"),
    "SHLO_REDUCE": _shlo("reduce"),
    "SHLO_WHILE": _shlo("while"),
    "CHECK_CONST": ["check.expect_eq_const", "check.expect_almost_eq_const"],
    "CHECK_BINARY": ["check.expect_eq", "check.expect_almost_eq"],
    "CHECK_CLOSE": ["check.expect_close"],
    "CHECK_SERIALIZED": ["check.expect_serialized_eq"],
    "INTERP_PRINT": ["interpreter.print"],
    "INTERP_PROBE": ["interpreter.probe"],
    **CHLO_TERMINALS,
}

CUSTOM_OP_RULES = ["_sdy_op", "_stablehlo_op", "_arith_op", "_check_op", "_chlo_op"]
