"""The propagator's provenance log (``shardy_ref/propagate/provenance.py``): every step that
changed a sharding, and the stories it tells of each axis, checked step by step on random
programs and by hand on small ones."""
from __future__ import annotations

from hypothesis import given, settings

from shardy_ref.ir.func_attrs import function_type
from shardy_ref.ir.value_sharding import get_func_result_sharding, get_sharding
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module, print_module
from shardy_ref.pass_manager import PassContext, PassManager
from shardy_ref.propagate.provenance import (
    FuncResult,
    axis_story,
    dim_axes,
    has_axis,
    owner,
    position,
)
from shardy_ref.testing.programs import programs
from shardy_ref.tools.explain import propagation_passes
from tests.profiles import examples


def propagate(text: str, record: bool = True):
    """``sdy-propagation-pipeline`` up to the end of propagation, as ``shardy-ref explain``
    runs it (the export passes after it, explicit reshards among them, change shardings
    on purpose, outside propagation)."""
    module = parse_module(text)
    ctx = PassContext(record_provenance=record)
    PassManager(propagation_passes(), verify=verify_module).run(module, ctx)
    return module, ctx.provenance


def sharded_values(module):
    """``(key, final sharding)`` of every argument, op result and main-function result."""
    for op in module.walk():
        if op.name == "func.func":
            if op.regions and op.regions[0].blocks:
                for arg in op.regions[0].blocks[0].args:
                    yield arg, get_sharding(arg)
            n = len(function_type(op).results)
            for i in range(n):
                yield FuncResult(op, i), get_func_result_sharding(op, i)
        for r in op.results:
            yield r, get_sharding(r)


def check_story(log, key, dim, axis) -> None:
    """Each move of the story really added the axis to its tensor, from a source that had
    it; the origin had the axis before propagation."""
    story = axis_story(log, key, dim, axis)
    indices = [m.step.index for m in story.moves]
    assert indices == sorted(indices, reverse=True) and len(set(indices)) == len(indices)
    want_key, want_dim, want_axis = key, dim, axis
    for move in story.moves:
        assert (move.key, move.dim, move.axis) == (want_key, want_dim, want_axis)
        i = position(move.step, move.key)
        assert has_axis(dim_axes(move.step.after[i], move.dim), move.axis)
        assert not has_axis(dim_axes(move.step.before[i], move.dim), move.axis)
        if move.step.kind == "priority":  # the user's own sharding, back in its round
            assert move is story.moves[-1] and story.origin is move.key
            return
        if move.source is None:
            break
        j = position(move.step, move.source)
        assert has_axis(dim_axes(move.step.before[j], move.source_dim), move.source_axis)
        want_key, want_dim, want_axis = move.source, move.source_dim, move.source_axis
    if story.origin is not None:
        assert (story.origin, story.origin_dim, story.origin_axis) == (
            want_key, want_dim, want_axis)
        touched = log.steps_of(story.origin)
        if touched:  # the first step that changed it saw its sharding from before
            first = touched[0]
            initial = first.before[position(first, story.origin)]
            assert has_axis(dim_axes(initial, want_dim), want_axis)


@settings(max_examples=examples(40))
@given(programs(max_ops=10, sharding_groups=True, manual_computations=True,
                control_flow=True, calls=True, priorities=True))
def test_every_axis_has_a_consistent_story(text):
    module, log = propagate(text)
    assert log is not None
    for key, sharding in list(sharded_values(module)):
        if sharding is None:
            continue
        for dim, d in enumerate(sharding.dim_shardings):
            for axis in d.axes:
                check_story(log, owner(key) if not isinstance(key, FuncResult) else key,
                            dim, axis)


@settings(max_examples=examples(20))
@given(programs(max_ops=8, sharding_groups=True, priorities=True))
def test_recording_changes_nothing(text):
    with_log, log = propagate(text)
    without, none = propagate(text, record=False)
    assert none is None and log is not None
    assert print_module(with_log) == print_module(without)


MLP = """\
sdy.mesh @mesh = <["data"=2, "model"=4]>
func.func @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %w1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
                %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %y = stablehlo.dot_general %h, %w2, contracting_dims = [1] x [0]
      : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
"""


def _main_args(module):
    func = next(op for op in module.walk() if op.name == "func.func")
    return func, func.regions[0].blocks[0].args


def test_an_axis_moved_backwards_through_two_dots():
    module, log = propagate(MLP)
    _, (_, w1, w2) = _main_args(module)
    (model,) = dim_axes(get_sharding(w2), 0)
    story = axis_story(log, w2, 0, model)
    assert story.origin is w1 and story.origin_dim == 1
    first, second = reversed(story.moves)
    # w1's "model" goes along the first dot's factor j (its non-contracting dim) ...
    assert first.step.op.name == "stablehlo.dot_general" and first.factor == 1
    assert first.source is w1 and first.key is first.step.op.results[0]
    # ... then the second dot's contracting factor k takes it to w2
    assert second.step.op.name == "stablehlo.dot_general" and second.factor == 2
    assert second.key is w2 and second.source is first.key
    assert second.step.phase.pass_name == "sdy-user-priority-propagate"
    assert second.step.phase.strategy == "aggressive"
    assert second.step.phase.op_priority is not None


def test_an_axis_of_a_user_sharding_has_no_moves():
    module, log = propagate(MLP)
    _, (x, _, _) = _main_args(module)
    story = axis_story(log, x, 0, dim_axes(get_sharding(x), 0)[0])
    assert story.moves == () and story.origin is x


PRIORITIES = """\
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}p1, {}]>},
                %y: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}p0]>})
    -> tensor<8x8xf32> {
  %0 = stablehlo.add %x, %y : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def test_steps_carry_their_user_priority_round():
    module, log = propagate(PRIORITIES)
    func, _ = _main_args(module)
    add = next(op for op in func.walk() if op.name == "stablehlo.add")
    s = get_sharding(add.results[0])
    (a,), (b,) = dim_axes(s, 0), dim_axes(s, 1)
    assert axis_story(log, add.results[0], 0, a).moves[0].step.phase.user_priority == 1
    assert axis_story(log, add.results[0], 1, b).moves[0].step.phase.user_priority == 0


GROUP = """\
sdy.mesh @mesh = <["a"=2]>
func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>},
                %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = stablehlo.negate %x : tensor<8xf32>
  %1 = stablehlo.abs %y : tensor<8xf32>
  sdy.sharding_group %0 group_id=7 : tensor<8xf32>
  sdy.sharding_group %1 group_id=7 : tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
"""


def test_a_sharding_group_moves_an_axis_between_its_members():
    module, log = propagate(GROUP)
    _, (x, y) = _main_args(module)
    story = axis_story(log, y, 0, dim_axes(get_sharding(y), 0)[0])
    assert story.origin is x
    kinds = [m.step.kind for m in reversed(story.moves)]
    assert "group" in kinds  # one move is the group keeping %0 and %1 equal
