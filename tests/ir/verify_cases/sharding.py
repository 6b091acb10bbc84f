"""Cases for the mesh, axis-ref and tensor-sharding rules (spec 003 §2.9, §3.3, §3.4, §3.7,
§3.11, §3.16, §3.18, §3.19), placed on ``sdy.mesh``, function arguments and results, op
results and ``sdy.sharding_constraint``; messages are upstream's (``verifiers.cc``; the
mesh ones as sdy_opt reports them while parsing ``sdy.mesh``).

DIMSH-2 (priority >= 0): a negative priority can't be written, the parser's priority
format rejects ``p-1``; the verifier's own check (``dim 0 has a negative priority``) is
reached only through the API, see ``tests/ir/test_verify_sharding_props.py``.
TSH-7 (size-0 dimensions not sharded): upstream dropped the check in commit 4a8fbeed
(spec 003 §3.18), so a sharded size-0 dimension must verify.
"""
from __future__ import annotations

from tests.ir.verify_cases import RuleCase

MESH = 'sdy.mesh @mesh = <["a"=8, "b"=2, "c"=4]>\n'


def on_arg(sharding: str, type_: str = "tensor<8x8xf32>") -> str:
    """A function whose argument 0 carries ``#sdy.sharding<sharding>``."""
    return MESH + (f"func.func @f(%arg0: {type_} {{sdy.sharding = #sdy.sharding<{sharding}>}})"
                   f" -> {type_} {{\n  return %arg0 : {type_}\n}}\n")


def on_result(sharding: str) -> str:
    """A function whose result 0 carries ``#sdy.sharding<sharding>``."""
    return MESH + ("func.func @f(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> "
                   f"{{sdy.sharding = #sdy.sharding<{sharding}>}}) {{\n"
                   "  return %arg0 : tensor<8x8xf32>\n}\n")


def on_op(shardings: str) -> str:
    """A ``stablehlo.add`` whose ``sdy.sharding`` is ``#sdy.sharding_per_value<[...]>``."""
    return MESH + ("func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
                   "  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = "
                   f"#sdy.sharding_per_value<[{shardings}]>}} : tensor<8x8xf32>\n"
                   "  return %0 : tensor<8x8xf32>\n}\n")


def on_constraint(sharding: str, type_: str = "tensor<8x8xf32>") -> str:
    """A ``sdy.sharding_constraint`` with ``sharding``."""
    return MESH + (f"func.func @f(%arg0: {type_}) -> {type_} {{\n"
                   f"  %0 = sdy.sharding_constraint %arg0 <{sharding}> : {type_}\n"
                   f"  return %0 : {type_}\n}}\n")


def mesh_op(mesh: str) -> str:
    """A module holding only ``sdy.mesh @mesh = <mesh>``."""
    return f"sdy.mesh @mesh = {mesh}\n"


MESH_OP = "custom op 'sdy.mesh' "
ARG = "'func.func' op arg 0 - "
OP = "'stablehlo.add' op result - "
SC = "'sdy.sharding_constraint' op "

CASES: dict[str, RuleCase] = {
    "AXREF-1": RuleCase(on_arg('@mesh, [{"a"}, {"b"}]'), on_arg('@mesh, [{"a"}, {"d"}]'),
                        ARG + 'unknown axis name: "d"'),
    "AXREF-2": RuleCase(on_constraint('@mesh, [{"c":(1)2}, {}]'),
                        on_constraint('@mesh, [{"c":(1)4}, {}]'),
                        SC + 'sub-axis size is equal to the full axis size: "c":(1)4'),
    "AXLIST-1": RuleCase(on_op('<@mesh, [{}, {}], replicated={"b"}>'),
                         on_op('<@mesh, [{}, {}], replicated={"d"}>'),
                         OP + 'unknown axis name: "d"'),
    "AXLIST-2": RuleCase(on_arg('@mesh, [{"a":(1)2}, {"a":(2)2}]'),
                         on_arg('@mesh, [{"a":(1)4}, {"a":(2)2}]'),
                         ARG + 'overlapping sub-axes: "a":(1)4, "a":(2)2'),
    "AXLIST-3": RuleCase(on_arg('@mesh, [{"a":(1)2, "b", "a":(2)4}, {}]'),
                         on_arg('@mesh, [{"a":(1)2, "a":(2)4}, {}]'),
                         ARG + 'two consecutive sub-axes can be merged: "a":(1)2, "a":(2)4'),
    "DIMSH-1": RuleCase(on_op('<@mesh, [{"a", "b"}, {}]>'), on_op('<@mesh, [{"a", "a"}, {}]>'),
                        OP + 'duplicate axis ref: "a"'),
    "DIMSH-2": RuleCase(on_arg('@mesh, [{"a"}p0, {}]'), on_arg('@mesh, [{"a"}p-1, {}]'),
                        "expecting priority in format 'p<number>', got: p"),
    "TSH-7": RuleCase(on_arg('@mesh, [{}, {}]', "tensor<0x8xf32>"),
                      on_arg('@mesh, [{"a"}, {}]', "tensor<0x8xf32>"), None,
                      not_enforced="upstream allows sharding a size-0 dimension (4a8fbeed)"),
    "DIMSH-3": RuleCase(on_arg('@mesh, [{"a"}, {?}p1]'), on_arg('@mesh, [{"a"}, {}p1]'),
                        ARG + "dim 1 is empty and closed but has a priority"),
    "SUBAX-1": RuleCase(on_arg('@mesh, [{"a":(1)2}, {}]'), on_arg('@mesh, [{"a":(-1)2}, {}]'),
                        ARG + 'sub-axis pre-size must be at least 1: "a":(-1)2'),
    "SUBAX-2": RuleCase(on_arg('@mesh, [{"a":(2)2}, {}]'), on_arg('@mesh, [{"a":(2)1}, {}]'),
                        ARG + 'sub-axis sizes must be greater than 1: "a":(2)1'),
    "SUBAX-3": RuleCase(on_arg('@mesh, [{"a":(4)2}, {}]'), on_arg('@mesh, [{"a":(4)4}, {}]'),
                        ARG + "sub-axis next pre-size 16 doesn't divide the size of the full "
                        'axis 8: "a":(4)4'),
    "SUBAX-4": RuleCase(on_arg('@mesh, [{"a":(1)4}, {}]'), on_arg('@mesh, [{"a":(1)8}, {}]'),
                        ARG + 'sub-axis size is equal to the full axis size: "a":(1)8'),
    "TSH-1": RuleCase(on_result('@mesh, [{"a"}p0, {}]'), on_result('@mesh, [{}p0, {}]'),
                      "'func.func' op result 0 - dim 0 is empty and closed but has a priority"),
    "TSH-2": RuleCase(on_op('<@mesh, [{"a"}, {}], replicated={"b", "c"}>'),
                      on_op('<@mesh, [{"a"}, {}], replicated={"b", "b"}>'),
                      OP + 'duplicate axis ref: "b"'),
    "TSH-3": RuleCase(on_constraint('@mesh, [{}, {}], unreduced={"c"}'),
                      on_constraint('@mesh, [{}, {}], unreduced={"d"}'),
                      SC + 'unknown axis name: "d"'),
    "TSH-4": RuleCase(on_constraint("@mesh, []", "!stablehlo.token"),
                      on_constraint('@mesh, [], replicated={"a"}', "!stablehlo.token"),
                      SC + "non-shaped tensors can only have a sharding with rank 0 and no "
                      "replicated or unreduced axes. type: '!stablehlo.token', sharding: "
                      '#sdy.sharding<@mesh, [], replicated={"a"}>'),
    "TSH-5": RuleCase(on_arg("@mesh, []", "tensor<f32>"), on_arg("@mesh, []", "tensor<*xf32>"),
                      ARG + "only ranked tensors can have a sharding. type: 'tensor<*xf32>'"),
    "TSH-6": RuleCase(on_constraint('@mesh, [{"a"}, {}]'), on_constraint('@mesh, [{"a"}]'),
                      SC + "sharding doesn't match tensor rank: 1 != 2"),
    "TSH-8": RuleCase(on_arg('@mesh, [{"a":(1)4}, {}], unreduced={"a":(4)2}'),
                      on_arg('@mesh, [{"a":(1)4}, {}], unreduced={"a":(2)4}'),
                      ARG + 'overlapping sub-axes: "a":(1)4, "a":(2)4'),
    "TSH-9": RuleCase(on_op('<@mesh, [{}, {}], replicated={"b", "c"}>'),
                      on_op('<@mesh, [{}, {}], replicated={"c", "b"}>'),
                      OP + "replicated axes are not ordered w.r.t. mesh"),
    "TSPV-1": RuleCase(on_op('<@mesh, [{"a"}, {}]>'),
                       on_op('<@mesh, [{"a"}, {}]>, <@mesh, [{}, {"a"}]>'),
                       "'stablehlo.add' op result shardings don't match number of values: "
                       "2 shardings vs 1 values"),
    "MESHATTR-1": RuleCase(mesh_op("<[], device_ids=[3]>"), mesh_op("<[], device_ids=[-1]>"),
                           MESH_OP + "device id must be non-negative, got: -1"),
    "MESHATTR-2": RuleCase(mesh_op("<[], device_ids=[0]>"), mesh_op("<[], device_ids=[1, 0]>"),
                           MESH_OP + "axes is empty and device_ids has more than one element"),
    "MESHATTR-3": RuleCase(mesh_op('<["a"=2, "b"=2]>'), mesh_op('<["a"=2, "a"=2]>'),
                           MESH_OP + 'duplicate axis name: "a"'),
    "MESHATTR-4": RuleCase(mesh_op('<["a"=2, "b"=2], device_ids=[0, 2, 1, 3]>'),
                           mesh_op('<["a"=2, "b"=2], device_ids=[0, 2, 1, 1]>'),
                           MESH_OP + "sorted device ids must be iota(product(axes)), got: "
                           "0, 1, 1, 2"),
    "MESH-4": RuleCase(mesh_op('<["a"=2, "b"=1]>'), mesh_op('<["a"=2, "b"=0]>'),
                       MESH_OP + "axis size must be at least 1, got: 0"),
}
