"""The invariants of :mod:`shardy_ref.testing.invariants` (issue 16): each holds on random
programs (100 examples each in the CI profile, 10,000 in ``HYPOTHESIS_PROFILE=long``), and
each fails on a deliberately broken input or implementation, so none passes vacuously."""
from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import given, settings

from shardy_ref.ir import (
    ArrayAttr,
    AxisRef,
    DictionaryAttr,
    DimensionSharding,
    Mesh,
    MeshAxis,
    TensorSharding,
)
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module, print_module
from shardy_ref.testing import invariants as inv
from shardy_ref.testing.invariants import INVARIANTS, InvariantViolation, Subject
from shardy_ref.testing.programs import programs, random_program
from tests.profiles import examples

MODULE = """sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(
    %arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {?}], replicated={"b"}>},
    %arg1: tensor<8x8xf32>)
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a"}]>}) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{?}, {"b", ?}]> : tensor<8x8xf32>
  %2 = stablehlo.multiply %1, %arg1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
"""


@pytest.mark.parametrize("name", list(INVARIANTS))
@settings(max_examples=examples(100, 10_000), deadline=None, database=None)
@given(text=programs())
def test_invariant_holds_on_random_programs(name, text):
    INVARIANTS[name](text)


@pytest.mark.parametrize("name", list(INVARIANTS))
def test_invariant_holds_on_a_hand_written_module(name):
    assert INVARIANTS[name](MODULE) is None


def _violates(name: str, text: str, **kwargs) -> str:
    with pytest.raises(InvariantViolation) as info:
        INVARIANTS[name](text, **kwargs)
    assert info.value.name == name
    return info.value.message


# -- each invariant fails where it should ----------------------------------------------------
def _rename_symbols(text: str) -> str:
    return print_module(parse_module(text.replace("@mesh", "@mesh_"), "t.mlir"))


def test_roundtrip_fails_for_a_printer_that_is_not_canonical():
    message = _violates("roundtrip", MODULE, subject=Subject(canonical=_rename_symbols))
    assert "@mesh__" in message


def test_verifier_sound_fails_when_a_valid_program_is_rejected():
    def strict(text):  # a verifier that rejects sub-axes
        verify_module(parse_module(text, "t.mlir"))
        if '":(' in text:
            raise ValueError("sub-axes are not supported")

    text = next(random_program(s) for s in range(100) if '":(' in random_program(s))
    assert "sub-axes are not supported" in _violates("verifier_sound", text,
                                                     subject=Subject(verify=strict))


def test_verifier_sound_fails_on_an_invalid_program():
    bad = MODULE.replace('{"b", ?}', '{"q", ?}')
    assert "unknown axis" in _violates("verifier_sound", bad)


def _drop_argument_sharding(text: str, pipeline: str) -> str:
    module = parse_module(inv._run_pipeline(text, pipeline), "t.mlir")
    func = next(op for op in module.walk() if op.name == "func.func")
    func.attributes["arg_attrs"] = ArrayAttr(
        tuple(DictionaryAttr(()) for _ in func.attributes["arg_attrs"].value))
    return print_module(module)


def test_propagation_extends_fails_when_a_user_sharding_is_dropped():
    message = _violates("propagation_extends_user_shardings", MODULE,
                        subject=Subject(run_pipeline=_drop_argument_sharding))
    assert message.startswith("argument 0: the sharding was dropped")


def test_propagation_extends_fails_when_replicated_axes_are_dropped():
    # the export passes of the whole pipeline drop explicitly replicated axes
    no_constraint = MODULE.replace('sdy.sharding_constraint %0 <@mesh, [{?}, {"b", ?}]>',
                                   "stablehlo.negate %0")
    message = _violates("propagation_extends_user_shardings", no_constraint,
                        pipeline=inv.PROPAGATION_PIPELINE)
    assert message.startswith("argument 0: the replicated axes changed")


def test_propagation_extends_fails_when_a_closed_dimension_changes():
    def reshard_result(text, pipeline):
        return inv._run_pipeline(text, pipeline).replace('[{}, {"a"}]>}', '[{"b"}, {"a"}]>}')

    message = _violates("propagation_extends_user_shardings", MODULE,
                        subject=Subject(run_pipeline=reshard_result))
    assert message.startswith("result 0: closed dimension 0 changed")


def test_propagation_fixpoint_fails_for_a_pipeline_that_is_not_idempotent():
    def renaming(text, pipeline):
        return _rename_symbols(inv._run_pipeline(text, pipeline))

    assert "@mesh__" in _violates("propagation_fixpoint", MODULE,
                                  subject=Subject(run_pipeline=renaming))


REWIRED = """sdy.mesh @mesh = <["a"=2, "b"=4, "c"=2]>
func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {?}], replicated={"a"}> : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{?}, {?}], replicated={"b", "c"}> : tensor<8x8xf32>
  %2 = stablehlo.transpose %arg0, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0]
      : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %2, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}
"""


def test_propagation_fixpoint_allows_rewired_operands_as_in_jaxlib():
    """Found by ``shardy-ref fuzz`` (10,000 examples, seed 0): the first run's DCE erases
    the dot, so the second run's sdy-apply-sharding-constraints sees a constraint chain
    with one user each and moves the transpose onto its end; jaxlib's sdy_opt does the
    same. Every value keeps its sharding."""
    once = inv._run_pipeline(REWIRED, inv.PROPAGATION_STAGE)
    twice = inv._run_pipeline(once, inv.PROPAGATION_STAGE)
    assert "stablehlo.transpose %arg0" in once and "stablehlo.transpose %1" in twice
    inv.propagation_fixpoint(REWIRED)


def test_whole_pipeline_is_not_a_fixpoint_on_seed_286_as_in_jaxlib():
    """Why propagation_fixpoint checks the propagation stage (see its docstring)."""
    _violates("propagation_fixpoint", random_program(286), pipeline=inv.PROPAGATION_PIPELINE)


def _lowering(keep_reshards: bool):
    def run_pipeline(text, pipeline):
        if pipeline != inv.RESHARD_TO_COLLECTIVES:
            return inv._run_pipeline(text, pipeline)
        module = parse_module(text, "t.mlir")
        if not keep_reshards:  # drop every reshard instead of lowering it
            for op in [o for o in module.walk() if o.name == "sdy.reshard"]:
                op.results[0].replace_all_uses_with(op.operands[0])
                op.erase()
        return print_module(module)
    return Subject(run_pipeline=run_pipeline)


def test_reshard_reaches_target_fails_when_reshards_stay():
    message = _violates("reshard_reaches_target", MODULE, subject=_lowering(True))
    assert "sdy.reshard left" in message


def test_reshard_reaches_target_fails_when_a_reshard_is_dropped():
    message = _violates("reshard_reaches_target", MODULE, subject=_lowering(False))
    assert "is sharded" in message and "expected" in message


def _flipped(text, *arrays, **options):
    return tuple(np.flip(x) for x in inv._simulate(text, *arrays, **options))


def test_collective_algebra_fails_for_a_wrong_simulator():
    message = _violates("collective_algebra", MODULE, subject=Subject(simulate=_flipped))
    assert "simulate of" in message and "sdy.all_slice" in message


def test_collective_algebra_builds_both_compositions():
    """all_slice then all_gather of the free axis "b", all_gather then all_slice of "a",
    all_to_all of "a" to dimension 1 and back."""
    mesh = Mesh((MeshAxis("a", 2), MeshAxis("b", 2)))
    sharding = TensorSharding("mesh", (DimensionSharding((AxisRef("a"),)), DimensionSharding()))
    cases = inv.collective_cases(mesh, "mesh", (8, 8), sharding, random.Random(1))
    firsts = [c.split("%0 = ")[1].split(" ")[0] for c in cases]
    assert firsts == ["sdy.all_slice", "sdy.all_gather", "sdy.all_to_all"]
    for case in cases:
        verify_module(parse_module(case, "case.mlir"))


def test_per_device_fails_for_a_wrong_simulator():
    def off(text, *arrays, **options):
        return tuple(x * np.float32(1.001) + np.float32(1e-3)
                     for x in inv._simulate(text, *arrays, **options))

    message = _violates("per_device_equals_single_device", MODULE, subject=Subject(simulate=off))
    assert message.startswith("result 0: largest error")


def test_per_device_reports_a_refused_program():
    tuples = ('sdy.mesh @mesh = <["a"=2]>\n'
              'func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, '
              '[{"a"}]>}) -> tensor<4xf32> {\n'
              "  %0 = stablehlo.tuple %arg0, %arg0 : tuple<tensor<4xf32>, tensor<4xf32>>\n"
              "  %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<4xf32>, "
              "tensor<4xf32>>) -> tensor<4xf32>\n"
              "  return %1 : tensor<4xf32>\n}\n")
    reason = inv.per_device_equals_single_device(tuples)
    assert reason.startswith("refused: Shardy propagation doesn't support tuples")


# -- where an invariant does not apply (issue 27: programs of every op kind) ----------------
ILL_CONDITIONED = """sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a"}]>},
    %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = stablehlo.constant dense<1.000000e+07> : tensor<8x8xf32>
  %1 = stablehlo.multiply %0, %c : tensor<8x8xf32>
  %2 = stablehlo.sine %1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
"""  # noqa: E501


def test_per_device_does_not_judge_an_ill_conditioned_program():
    """``sin(1e7 * x @ y)`` moves by its whole range when the sum is taken in another
    order, and on one device when the inputs move by one part in a million: not
    applicable, with the reason."""
    def nudged(text, *arrays, **options):
        return tuple(x + np.float32(1.0) for x in inv._simulate(text, *arrays, **options))

    why = inv.per_device_equals_single_device(ILL_CONDITIONED, subject=Subject(
        simulate=nudged))
    assert why.startswith("result 0 of the single-device run is ill-conditioned: it moves "
                          "by ")
    assert re.search(r"when its inputs move by one part in a million, and the partitioned "
                     r"result is [0-9.]+ away$", why)


def test_per_device_fails_a_result_far_beyond_its_conditioning():
    """Ill-conditioned, but ten times further from the single-device result than the
    result moves with its inputs: a violation."""
    def far(text, *arrays, **options):
        return tuple(x + np.float32(1e3) for x in inv._simulate(text, *arrays, **options))

    message = _violates("per_device_equals_single_device", ILL_CONDITIONED,
                        subject=Subject(simulate=far))
    assert message.startswith("result 0: largest error 1e+03 over")


def test_per_device_still_fails_a_wrong_simulator_on_a_well_conditioned_program():
    def nudged(text, *arrays, **options):
        return tuple(x + np.float32(1.0) for x in inv._simulate(text, *arrays, **options))

    message = _violates("per_device_equals_single_device", MODULE,
                        subject=Subject(simulate=nudged))
    assert message.startswith("result 0: largest error 1 over")


GROUPED = """sdy.mesh @mesh = <["b"=2]>
func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>},
    %arg1: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}], replicated={"b"}>})
    -> (tensor<16xf32>, tensor<16xf32>) {
  sdy.sharding_group %arg1 group_id=0 : tensor<16xf32>
  sdy.sharding_group %arg0 group_id=0 : tensor<16xf32>
  %0 = stablehlo.abs %arg0 : tensor<16xf32>
  return %0, %arg1 : tensor<16xf32>, tensor<16xf32>
}
"""


def test_sharding_group_members_take_the_groups_sharding():
    """The group gives ``%arg1`` the sharding of ``%arg0`` (its replicated axis goes, as in
    real Shardy): not a user sharding dropped. Without the group it would be one."""
    out = inv._run_pipeline(GROUPED, inv.PROPAGATION_STAGE)
    assert 'replicated={"b"}' not in out
    assert inv.propagation_extends_user_shardings(GROUPED) is None

    # the same output judged against an input without the group: a dropped axis
    message = _violates("propagation_extends_user_shardings", GROUPED.replace(
        "  sdy.sharding_group %arg1 group_id=0 : tensor<16xf32>\n", ""),
        subject=Subject(run_pipeline=lambda text, pipeline: inv._run_pipeline(
            GROUPED, pipeline)))
    assert message.startswith("argument 1: the replicated axes changed")


def test_reshard_reaches_target_does_not_apply_through_barriers():
    barrier = MODULE.replace("%2 = stablehlo.multiply %1, %arg1 : tensor<8x8xf32>",
                             "%3 = stablehlo.multiply %1, %arg1 : tensor<8x8xf32>\n"
                             "  %2 = sdy.propagation_barrier %3 allowed_direction=NONE : "
                             "tensor<8x8xf32>")
    assert inv.reshard_reaches_target(barrier) == \
        "a propagation barrier reaches the export passes"
    assert inv.reshard_reaches_target(MODULE) is None
