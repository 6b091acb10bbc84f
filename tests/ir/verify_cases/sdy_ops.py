"""Verifier cases for the sdy ops that are not collectives (spec 003 §2.6-2.8, §2.10,
§2.11, §2.14, §2.16): DFE-*, MC-*, NC-*, PB-1, plus checks without a rule ID in spec 003
(keyed by op name), the ODS constraints and ``FuncDataFlowEdgeOp::verifySymbolUses``.

Messages are upstream's (``verifiers.cc``, the oracle's diagnostics); the invalid module
differs from the valid one only where it breaks the rule.
"""
from __future__ import annotations

from tests.ir.verify_cases import RuleCase

MESH = 'sdy.mesh @mesh = <["a"=2, "b"=2]>\n'
T8 = "tensor<8xf32>"
T16x32 = "tensor<16x32xf32>"


def _func(body: str, args: str = f"%arg0: {T8}", result: str = T8, mesh: str = MESH) -> str:
    """``@f(args) -> result`` with ``body`` (its lines indented by the caller)."""
    return f"{mesh}func.func @f({args}) -> {result} {{\n{body}}}\n"


def _edge(op: str, user: str = "%0") -> str:
    """A ``sdy.data_flow_edge`` on ``%arg0`` (``op``: its text after ``%0 = ``)."""
    return _func(f"  %0 = {op}\n  return {user} : {T8}\n")


def _manual(in_sh: str, out_sh: str, axes: str, local: str, body_result: str | None = None,
            global_in: str = T16x32, global_out: str = T16x32) -> str:
    """A ``sdy.manual_computation`` on ``%arg0``, returning its body argument; the body
    returns a value of type ``body_result`` (the local type by default)."""
    body_result = body_result or local
    ret = ("    sdy.return %arg1 : " + local if body_result == local else
           f'    %1 = stablehlo.custom_call @foo(%arg1) : ({local}) -> {body_result}\n'
           f"    sdy.return %1 : {body_result}")
    return _func(
        f"  %0 = sdy.manual_computation(%arg0) in_shardings=[{in_sh}] "
        f"out_shardings=[{out_sh}] manual_axes={{{axes}}} (%arg1: {local}) {{\n"
        f"{ret}\n"
        f"  }} : ({global_in}) -> {global_out}\n"
        f"  return %0 : {global_out}\n", args=f"%arg0: {global_in}", result=global_out)


def _named(args: str = f"%arg1: {T8}", returned: str = f"%arg1 : {T8}", shardings: str = "",
           result: str = T8) -> str:
    return _func(f'  %0 = sdy.named_computation<"foo">(%arg0){shardings} ({args}) {{\n'
                 f"    sdy.return {returned}\n"
                 f"  }} : ({T8}) -> {result}\n"
                 f"  return %0 : {result}\n", result=result)


def _barrier(direction: str) -> str:
    return _edge(f"sdy.propagation_barrier %arg0 allowed_direction={direction} : {T8}")


def _generic(op: str, result: str = T8) -> str:
    """A function whose body is ``op`` (generic form) and a return of ``%0``."""
    return _func(f"  %0 = {op}\n  return %0 : {result}\n", result=result)


MC_NESTED = """\
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] \
out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<8x32xf32>) {
    %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{}, {}]>] \
out_shardings=[<@mesh, [{}, {}]>] manual_axes={INNER} (%arg2: tensor<8x32xf32>) {
      sdy.return %arg2 : tensor<8x32xf32>
    } : (tensor<8x32xf32>) -> tensor<8x32xf32>
    sdy.return %1 : tensor<8x32xf32>
  } : (tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
"""

CASES = {
    # --- sdy.data_flow_edge (§2.7) ---------------------------------------------------------
    "DFE-1": RuleCase(
        valid=_edge(f"sdy.data_flow_edge %arg0 : {T8}"),
        invalid=_func(f"  %0 = sdy.data_flow_edge %arg0 : {T8}\n"
                      f"  %1 = stablehlo.add %arg0, %0 : {T8}\n  return %1 : {T8}\n"),
        message="'sdy.data_flow_edge' op expected input of sdy.data_flow_edge to have a "
                "single user"),
    "DFE-2": RuleCase(
        valid=_func(f'  %0 = stablehlo.negate %arg0 : {T8}\n'
                    f"  %1 = sdy.data_flow_edge %0 : {T8}\n  return %1 : {T8}\n"),
        invalid=_func(f'  %0 = sdy.sharding_constraint %arg0 <@mesh, [{{}}]> : {T8}\n'
                      f"  %1 = sdy.data_flow_edge %0 : {T8}\n  return %1 : {T8}\n"),
        message="'sdy.data_flow_edge' op expected input of sdy.data_flow_edge to not be "
                "defined by an SdyDialect op (other than an sdy.named_computation)."),
    "DFE-3": RuleCase(
        valid=_edge(f'sdy.data_flow_edge %arg0 sharding=<@mesh, [{{"a"}}]> : {T8}'),
        invalid=_edge(f'sdy.data_flow_edge %arg0 sharding=<@mesh, [{{"a"}}, {{}}]> : {T8}'),
        message="'sdy.data_flow_edge' op sharding doesn't match tensor rank: 2 != 1"),
    "sdy.data_flow_edge static shape": RuleCase(
        valid=_edge(f"sdy.data_flow_edge %arg0 : {T8}"),
        invalid=_func("  %0 = sdy.data_flow_edge %arg0 : tensor<?xf32>\n"
                      "  return %0 : tensor<?xf32>\n",
                      args="%arg0: tensor<?xf32>", result="tensor<?xf32>"),
        message="'sdy.data_flow_edge' op expected sdy.data_flow_edge to have a static-shaped "
                "result. type: 'tensor<?xf32>'"),
    # --- sdy.func_data_flow_edge (FuncDataFlowEdgeOp::verifySymbolUses) --------------------
    "sdy.func_data_flow_edge single user": RuleCase(
        valid=_edge(f"sdy.func_data_flow_edge %arg0 : {T8}"),
        invalid=_edge(f"sdy.func_data_flow_edge %arg0 : {T8}", user="%arg0"),
        message="'sdy.func_data_flow_edge' op expected operand of sdy.func_data_flow_edge to "
                "have a single user"),
    "sdy.func_data_flow_edge call result": RuleCase(
        valid=_func(f"  %0 = func.call @f(%arg0) : ({T8}) -> {T8}\n"
                    f"  %1 = sdy.func_data_flow_edge %0 : {T8}\n  return %1 : {T8}\n"),
        invalid=_func(f"  %0 = stablehlo.negate %arg0 : {T8}\n"
                      f"  %1 = sdy.func_data_flow_edge %0 : {T8}\n  return %1 : {T8}\n"),
        message="'sdy.func_data_flow_edge' op expected operand of sdy.func_data_flow_edge to "
                "be a result of call op."),
    "sdy.func_data_flow_edge func argument": RuleCase(
        valid=_named(args=f"%arg1: {T8}", returned=f"%arg1 : {T8}"),
        invalid=_func(f'  %0 = sdy.named_computation<"foo">(%arg0) (%arg1: {T8}) {{\n'
                      f"    %1 = sdy.func_data_flow_edge %arg1 : {T8}\n"
                      f"    sdy.return %1 : {T8}\n  }} : ({T8}) -> {T8}\n"
                      f"  return %0 : {T8}\n"),
        message="'sdy.func_data_flow_edge' op expected operand of sdy.func_data_flow_edge to "
                "be a block argument of a func op."),
    # --- sdy.manual_computation (§2.8) -----------------------------------------------------
    "MC-1": RuleCase(
        valid=_manual('<@mesh, [{"a"}, {}]>', '<@mesh, [{"a"}, {}]>', '"a"',
                      "tensor<8x32xf32>"),
        invalid=_manual('<@mesh, [{"a"}, {}, {}]>', '<@mesh, [{"a"}, {}]>', '"a"',
                        "tensor<8x32xf32>"),
        message="'sdy.manual_computation' op operand - sharding doesn't match tensor rank: "
                "3 != 2"),
    "MC-2": RuleCase(
        valid=_manual("<@mesh, [{}, {}]>", "<@mesh, [{}, {}]>", "", T16x32),
        invalid=_manual("<@mesh, [{}, {}]>", "<@mesh, [{}, {}]>", "", T16x32).replace(
            f"sdy.return %arg1 : {T16x32}", f"sdy.return %arg1, %arg1 : {T16x32}, {T16x32}"),
        message="'sdy.manual_computation' op number of op results and region results must "
                "match. Op has 1 op results and 2 region results"),
    "MC-3": RuleCase(
        valid=_manual('<@mesh, [{}, {"b", "a"}]>', '<@mesh, [{}, {"b", "a"}]>', '"b"',
                      "tensor<16x16xf32>"),
        invalid=_manual('<@mesh, [{}, {"a", "b"}]>', '<@mesh, [{}, {"b", "a"}]>', '"b"',
                        "tensor<16x16xf32>"),
        message="'sdy.manual_computation' op operand sharding at index 0 must have all manual "
                "axes come before free axes in its dimension sharding at index 1. Saw manual "
                'axis "b" after free axis "a"'),
    "MC-4": RuleCase(
        valid=_manual('<@mesh, [{"a", "b"}, {}]>', '<@mesh, [{"a", "b"}, {}]>', '"a", "b"',
                      "tensor<4x32xf32>"),
        invalid=_manual('<@mesh, [{"a", "b"}, {}]>', '<@mesh, [{"a", "b"}, {}]>', '"a", "b"',
                        "tensor<2x32xf32>", global_in="tensor<6x32xf32>",
                        global_out="tensor<8x32xf32>"),
        message="'sdy.manual_computation' op operand dimension size 6 is not divisible by "
                "the manual axes size 4"),
    "MC-5": RuleCase(
        valid=_manual('<@mesh, [{"a"}, {}]>', '<@mesh, [{"a"}, {}]>', '"a"',
                      "tensor<8x32xf32>"),
        invalid=_manual('<@mesh, [{"a"}, {}]>', '<@mesh, [{"a"}, {}]>', '"a"',
                        "tensor<16x32xf32>"),
        message="'sdy.manual_computation' op operand shape, corresponding sharding, and "
                "region operand shape at index 0 must match. Expected local shape "
                "'tensor<8x32xf32>', actual local shape 'tensor<16x32xf32>'"),
    "MC-6": RuleCase(
        valid=_manual('<@mesh, [{"a"}, {}]>', '<@other, [{"a"}, {}]>', '"a"',
                      "tensor<8x32xf32>").replace(MESH, MESH + MESH.replace("@mesh", "@other")),
        invalid=_manual('<@mesh, [{"a"}, {}]>', '<@other, [{"a"}, {}]>', '"a"',
                        "tensor<8x32xf32>").replace(
            MESH, MESH + 'sdy.mesh @other = <["a"=2, "b"=4]>\n'),
        message="'sdy.manual_computation' op all in and out shardings must be bound to the "
                "same mesh or an empty mesh."),
    "MC-7": RuleCase(
        valid=_manual('<@mesh, [{"a"}, {}]>', '<@mesh, [{"a"}, {}]>', '"a", "b"',
                      "tensor<8x32xf32>"),
        invalid=_manual('<@mesh, [{"a"}, {}]>', '<@mesh, [{"a"}, {}]>', '"a", "c"',
                        "tensor<8x32xf32>"),
        message="'sdy.manual_computation' op unknown manual axis: \"c\""),
    "MC-8": RuleCase(
        valid=_func(MC_NESTED.replace("INNER", '"b"'), args=f"%arg0: {T16x32}",
                    result=T16x32),
        invalid=_func(MC_NESTED.replace("INNER", '"a"'), args=f"%arg0: {T16x32}",
                      result=T16x32),
        message="'sdy.manual_computation' op operates on axis \"a\" which is already bound by "
                "a parent sdy.manual_computation op"),
    "sdy.manual_computation implicit terminator": RuleCase(
        valid=_manual("<@mesh, [{}, {}]>", "<@mesh, [{}, {}]>", "", T16x32),
        invalid=_manual("<@mesh, [{}, {}]>", "<@mesh, [{}, {}]>", "", T16x32).replace(
            "sdy.return %arg1", "stablehlo.return %arg1"),
        message="'sdy.manual_computation' op expects regions to end with 'sdy.return', found "
                "'stablehlo.return'"),
    # --- sdy.named_computation (§2.10) -----------------------------------------------------
    "NC-1": RuleCase(
        valid=_named(),
        invalid=_named(args="%arg1: tensor<4xf32>", returned="%arg1 : tensor<4xf32>",
                       result="tensor<4xf32>"),
        message="expected the type of the 0'th block argument to match the type of the "
                "corresponding operand: 'tensor<4xf32>' vs 'tensor<8xf32>'"),
    "NC-2": RuleCase(
        valid=_named(),
        invalid=_named(returned=f"%arg1, %arg1 : {T8}, {T8}"),
        message="'sdy.named_computation' op inferred type(s) 'tensor<8xf32>', "
                "'tensor<8xf32>' are incompatible with return type(s) of operation "
                "'tensor<8xf32>'"),
    "sdy.named_computation block arguments": RuleCase(
        valid=_named(),
        invalid=_named(args=f"%arg1: {T8}, %arg2: {T8}"),
        message="number of block arguments must match the number of operands: 2 != 1"),
    "sdy.named_computation shardings": RuleCase(
        valid=_named(shardings=' in_shardings=[<@mesh, [{"a"}]>] '
                               'out_shardings=[<@mesh, [{"b"}]>]'),
        invalid=_named(shardings=' in_shardings=[<@mesh, [{"a"}]>] '
                                 'out_shardings=[<@mesh, [{"b"}]>, <@mesh, [{}]>]'),
        message="'sdy.named_computation' op out_shardings shardings don't match number of "
                "values: 2 shardings vs 1 values"),
    # --- sdy.propagation_barrier (§2.11) ---------------------------------------------------
    "PB-1": RuleCase(
        valid=_barrier("FORWARD"),
        invalid=_barrier("BOTH"),
        message="'sdy.propagation_barrier' op cannot specify `BOTH` as the direction. Not "
                "blocking propagation direction makes the op redundant."),
    "sdy.propagation_barrier same type": RuleCase(
        valid=_generic(f'"sdy.propagation_barrier"(%arg0) <{{allowed_direction = 1 : i32}}> '
                       f": ({T8}) -> {T8}"),
        invalid=_generic(f'"sdy.propagation_barrier"(%arg0) <{{allowed_direction = 1 : i32}}> '
                         f": ({T8}) -> tensor<8xf16>", result="tensor<8xf16>"),
        message="'sdy.propagation_barrier' op requires the same type for all operands and "
                "results"),
    # --- sdy.constant (§2.6), sdy.return (§2.14), sdy.sharding_group (§2.16) ---------------
    "CONST-1": RuleCase(
        valid=_generic(f'"sdy.constant"() <{{value = dense<1.0> : {T8}}}> : () -> {T8}'),
        invalid=_generic(f'"sdy.constant"() <{{value = dense<1.0> : {T8}}}> '
                         ": () -> tensor<4xf32>", result="tensor<4xf32>"),
        message="'sdy.constant' op inferred type(s) 'tensor<8xf32>' are incompatible with "
                "return type(s) of operation 'tensor<4xf32>'"),
    "sdy.return terminator": RuleCase(
        valid=_named(),
        invalid=_named(returned=f"%arg1 : {T8}\n    sdy.return %arg1 : {T8}"),
        message="'sdy.return' op must be the last operation in the parent block"),
    "SG-1": RuleCase(
        valid=_func(f"  sdy.sharding_group %arg0 group_id=1 : {T8}\n  return %arg0 : {T8}\n"),
        invalid=_func('  "sdy.sharding_group"(%arg0) <{group_id = 1 : i64}> : (tensor<*xf32>) '
                      "-> ()\n  return %arg0 : tensor<*xf32>\n",
                      args="%arg0: tensor<*xf32>", result="tensor<*xf32>"),
        message="'sdy.sharding_group' op operand #0 must be ranked tensor of any non-token "
                "type values, but got 'tensor<*xf32>'"),
    # --- blocks and func ops (builtin_ops.py) ----------------------------------------------
    "block terminator": RuleCase(
        valid=_func(f"  %0 = stablehlo.negate %arg0 : {T8}\n  return %0 : {T8}\n"),
        invalid=_func(f"  %0 = stablehlo.negate %arg0 : {T8}\n"),
        message='block with no terminator, has %0 = "stablehlo.negate"(%arg0) : '
                "(tensor<8xf32>) -> tensor<8xf32>"),
    "func.return parent": RuleCase(
        valid=_named(),
        invalid=_named().replace("sdy.return %arg1", "func.return %arg1"),
        message="'func.return' op expects parent op 'func.func'"),
}
