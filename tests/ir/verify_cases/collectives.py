"""Verifier cases for the collective ops (spec 003 §2.0-2.5, §2.12: COLL-*, AG-*, AR-*,
AS-*, A2A-*, CP-*, RS-*).

Each case is one function applying one collective to its argument, whose sharding is a
function argument attribute; the invalid text differs from the valid one only in what
breaks the rule. Messages are upstream's (``verifiers.cc``; the oracle's diagnostics of
``collective_verification.mlir``). The ``*_to_unreduced`` ops, which spec 003 lacks, are
tested in ``tests/ir/test_verify_collectives.py``.
"""
from __future__ import annotations

from tests.ir.verify_cases import RuleCase

T = "tensor<16x8xf32>"
MESH = 'sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>'
OTHER_MESH = 'sdy.mesh @other = <["a"=2, "b"=2]>'
# the axes of @mesh in another device order
PERMUTED_MESH = 'sdy.mesh @permuted = <["x"=2, "y"=2, "z"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>'
ARG = '<@mesh, [{"y"}, {"x"}]>'


def module(op: str, arg: str | None = ARG, *, meshes: tuple[str, ...] = (MESH,),
           type_: str = T) -> str:
    """``op`` (its text up to the type, on operand ``%arg0``) in a function whose argument
    has sharding ``arg`` (none if None)."""
    attr = f" {{sdy.sharding = #sdy.sharding{arg}}}" if arg else ""
    return ("\n".join(meshes) + f"\nfunc.func @f(%arg0: {type_}{attr}) -> {type_} {{\n"
            f"  %0 = {op} : {type_}\n  return %0 : {type_}\n}}\n")


def case(valid_op: str, invalid_op: str, message: str, *, valid_arg: str | None = ARG,
         invalid_arg: str | None = ARG, meshes: tuple[str, ...] = (MESH,),
         type_: str = T) -> RuleCase:
    return RuleCase(module(valid_op, valid_arg, meshes=meshes, type_=type_),
                    module(invalid_op, invalid_arg, meshes=meshes, type_=type_), message)


GATHER = 'sdy.all_gather [{}, {"x"}] %arg0 out_sharding=<@mesh, [{"y"}, {}]>'
SLICE = 'sdy.all_slice [{}, {"z"}] %arg0 out_sharding=<@mesh, [{"y"}, {"x", "z"}]>'
A2A = 'sdy.all_to_all [{"x"}: 1->0] %arg0 out_sharding=<@mesh, [{"y", "x"}, {}]>'
PERMUTE = 'sdy.collective_permute %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]>'
TO_PERMUTED = PERMUTE.replace("<@mesh,", "<@permuted,")
ALL_REDUCE = 'sdy.all_reduce {"z"} %arg0 out_sharding=<@mesh, [{"y"}, {"x"}]>'
REDUCE_SCATTER = 'sdy.reduce_scatter [{"z"}, {}] %arg0 out_sharding=<@mesh, [{"y", "z"}, {"x"}]>'
A2A_SORTED = ('sdy.all_to_all [{"x"}: 0->3, {"y"}: 2->1] %arg0 '
              'out_sharding=<@mesh, [{}, {"y"}, {}, {"x"}]>')
A2A_4D_ARG = '<@mesh, [{"x"}, {}, {"y"}, {}]>'
AR_SORTED = 'sdy.all_reduce {"x", "z"} %arg0 out_sharding=<@mesh, [{"y"}, {}]>'

CASES = {
    # --- Sdy_CollectiveOpInterface (spec 003 §2.0) ---
    "COLL-1": case(A2A, A2A, "'sdy.all_to_all' op collective on operand without sharding",
                   invalid_arg=None),
    "COLL-2": case(GATHER, GATHER.replace('[{"y"}, {}]>', '[{"y", "y"}, {}]>'),
                   "'sdy.all_gather' op duplicate axis ref: \"y\""),
    "COLL-3": case(GATHER, GATHER, "'sdy.all_gather' op result mesh does not match operand mesh",
                   invalid_arg='<@other, [{"a"}, {"b"}]>', meshes=(MESH, OTHER_MESH)),
    # only a maximal (rank-0) sharding can differ in rank from the tensor's; only
    # collective_permute allows the operand to be on another mesh
    "COLL-4": case(PERMUTE, PERMUTE.replace('<@mesh, [{"x"}, {"y"}]>', "<@maximal, []>"),
                   "'sdy.collective_permute' op result sharding has rank 0 but operand "
                   "sharding has rank 2",
                   meshes=(MESH, "sdy.mesh @maximal = <[], device_ids=[0]>")),
    # --- sdy.all_gather (§2.1) ---
    "AG-1": case(GATHER, GATHER, "'sdy.all_gather' op collective on operand without sharding",
                 invalid_arg=None),
    "AG-2": case(GATHER, GATHER.replace('[{}, {"x"}]', '[{}, {"w"}]'),
                 "'sdy.all_gather' op unknown axis name: \"w\""),
    "AG-3": case(GATHER, GATHER.replace('[{"y"}, {}]>', '[{"y"}, {"x"}]>'),
                 "'sdy.all_gather' op result sharding doesn't match expected sharding [] on "
                 "dimension 1"),
    # --- sdy.all_reduce (§2.2) ---
    "AR-1": case(ALL_REDUCE, ALL_REDUCE,
                 "'sdy.all_reduce' op result mesh does not match operand mesh",
                 invalid_arg='<@other, [{"a"}, {"b"}]>', meshes=(MESH, OTHER_MESH)),
    "AR-2": case(ALL_REDUCE, ALL_REDUCE.replace('{"z"}', '{"z", "z"}', 1),
                 "'sdy.all_reduce' op duplicate axis ref: \"z\""),
    "AR-3": case(AR_SORTED, AR_SORTED.replace('{"x", "z"}', '{"z", "x"}'),
                 "'sdy.all_reduce' op reduction axes are not ordered w.r.t. mesh",
                 valid_arg='<@mesh, [{"y"}, {}]>', invalid_arg='<@mesh, [{"y"}, {}]>'),
    "AR-4": case(ALL_REDUCE, ALL_REDUCE.replace('[{"y"}, {"x"}]>', '[{"y"}, {}]>'),
                 "'sdy.all_reduce' op operand and result shardings are not equivalent"),
    "AR-5": case(ALL_REDUCE, ALL_REDUCE.replace('{"z"}', '{"y"}', 1),
                 "'sdy.all_reduce' op reduction axis \"y\" overlaps with operand dimension "
                 "sharding or replicated axes"),
    "AR-6": case(ALL_REDUCE, ALL_REDUCE.replace('{"x"}]>', '{"x"}], unreduced={"z"}>'),
                 "'sdy.all_reduce' op reduction axis \"z\" overlaps with result unreduced axes",
                 valid_arg='<@mesh, [{"y"}, {"x"}], unreduced={"z"}>',
                 invalid_arg='<@mesh, [{"y"}, {"x"}], unreduced={"z"}>'),
    # --- sdy.all_slice (§2.3) ---
    "AS-1": case(SLICE, SLICE, "'sdy.all_slice' op result mesh does not match operand mesh",
                 invalid_arg='<@other, [{"a"}, {"b"}]>', meshes=(MESH, OTHER_MESH)),
    "AS-2": case(SLICE, SLICE.replace('[{}, {"z"}]', '[{"z"}, {"z"}]'),
                 "'sdy.all_slice' op duplicate axis ref: \"z\""),
    "AS-3": case(SLICE, SLICE.replace('{"x", "z"}]>', '{"z", "x"}]>'),
                 "'sdy.all_slice' op result sharding doesn't match expected sharding "
                 "[\"x\", \"z\"] on dimension 1"),
    # --- sdy.all_to_all (§2.4) ---
    "A2A-1": case(A2A, A2A, "'sdy.all_to_all' op result mesh does not match operand mesh",
                  invalid_arg='<@other, [{"a"}, {"b"}]>', meshes=(MESH, OTHER_MESH)),
    "A2A-2": case(A2A, A2A.replace('[{"x"}: 1->0]', "[]"),
                  "'sdy.all_to_all' op parameter list is empty"),
    "A2A-3": case(A2A, A2A.replace('[{"x"}: 1->0]', '[{"w"}: 1->0]'),
                  "'sdy.all_to_all' op unknown axis name: \"w\""),
    "A2A-4": case(A2A, A2A.replace("1->0", "2->0"),
                  "'sdy.all_to_all' op source dimension 2 is out of range [0, 2)"),
    "A2A-5": case(A2A, A2A.replace("1->0", "1->1"),
                  "'sdy.all_to_all' op overlapping source/target dimensions in all-to-all "
                  "params: 1"),
    "A2A-6": case(A2A_SORTED, A2A_SORTED.replace('{"x"}: 0->3, {"y"}: 2->1',
                                                 '{"y"}: 2->1, {"x"}: 0->3'),
                  "'sdy.all_to_all' op source dimensions are not sorted in ascending order: "
                  "0 appears after 2",
                  valid_arg=A2A_4D_ARG, invalid_arg=A2A_4D_ARG, type_="tensor<16x8x8x8xf32>"),
    "A2A-7": case(A2A, A2A.replace('[{"y", "x"}, {}]>', '[{"x", "y"}, {}]>'),
                  "'sdy.all_to_all' op result sharding doesn't match expected sharding "
                  "[\"y\", \"x\"] on dimension 0"),
    # --- sdy.collective_permute (§2.5) ---
    "CP-1": case(TO_PERMUTED, TO_PERMUTED,
                 "'sdy.collective_permute' op collective on operand without sharding",
                 invalid_arg=None, meshes=(MESH, PERMUTED_MESH)),
    "CP-2": case(TO_PERMUTED, PERMUTE.replace("<@mesh,", "<@copy,"),
                 "'sdy.collective_permute' op result mesh name is different but same device "
                 "ids as operand",
                 meshes=(MESH, PERMUTED_MESH, 'sdy.mesh @copy = <["x"=2, "y"=2, "z"=2]>')),
    "CP-3": case(PERMUTE, PERMUTE.replace('[{"x"}, {"y"}]>', '[{"x"}, {"y", "z"}]>'),
                 "'sdy.collective_permute' op sharded size of result doesn't match operand on "
                 "dimension 1: 4 != 2"),
    # --- sdy.reduce_scatter (§2.12) ---
    "RS-1": case(REDUCE_SCATTER, REDUCE_SCATTER,
                 "'sdy.reduce_scatter' op result mesh does not match operand mesh",
                 invalid_arg='<@other, [{"a"}, {"b"}]>', meshes=(MESH, OTHER_MESH)),
    "RS-2": case(REDUCE_SCATTER, REDUCE_SCATTER.replace('[{"z"}, {}]', '[{"z"}, {"z"}]'),
                 "'sdy.reduce_scatter' op duplicate axis ref: \"z\""),
    "RS-3": case(REDUCE_SCATTER, REDUCE_SCATTER.replace('[{"y", "z"}, {"x"}]>',
                                                         '[{"y"}, {"x", "z"}]>'),
                 "'sdy.reduce_scatter' op result sharding doesn't match expected sharding "
                 "[\"y\", \"z\"] on dimension 0"),
}
