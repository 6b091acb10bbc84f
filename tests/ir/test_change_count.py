"""The IR's change count (``shardy_ref.ir.change_count``): every edit made through
the IR API that the verifier could see moves it, so the pass manager may skip the verifier
when it did not move; edits that leave the IR as it was need not."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir.builtin_attrs import StringAttr
from shardy_ref.ir.change_count import change_count, structure_count
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.ir_snapshot import ir_snapshot, unchanged_since
from shardy_ref.ir.operation import Block, IRError, Operation, Region
from shardy_ref.ir.types import RankedTensorType
from shardy_ref.parser import parse_module
from shardy_ref.pass_manager import Pass
from shardy_ref.testing.programs import random_program
from tests.profiles import examples

MODULE = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  %1 = stablehlo.abs %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
"""


def _ops(module):
    return [op for op in module.walk() if op.name.startswith("stablehlo.")]


def _func(module):
    return next(op for op in module.walk() if op.name == "func.func")


def _marks() -> tuple[int, int]:
    return change_count(), structure_count()


def _retyped(value):
    return RankedTensorType((4,), value.type.element_type)


# each edit takes the module and the two stablehlo ops (a = negate, b = abs, b uses a)
CHANGES = {
    "set an attribute": lambda m, a, b: a.attributes.__setitem__("x", StringAttr("y")),
    "set_attr": lambda m, a, b: a.set_attr("x", StringAttr("y")),
    "remove_attr": lambda m, a, b: (a.attributes.update(x=StringAttr("y")),
                                    _marks(), a.remove_attr("x"))[1],
    "del an attribute": lambda m, a, b: (a.attributes.update(x=StringAttr("y")),
                                         _marks(), a.attributes.__delitem__("x"))[1],
    "setdefault of a new name": lambda m, a, b: a.attributes.setdefault("x", StringAttr("y")),
    "update": lambda m, a, b: a.attributes.update(x=StringAttr("y")),
    "|=": lambda m, a, b: a.attributes.__ior__({"x": StringAttr("y")}),
    "popitem": lambda m, a, b: (a.attributes.update(x=StringAttr("y")), _marks(),
                                a.attributes.popitem())[1],
    "clear": lambda m, a, b: (a.attributes.update(x=StringAttr("y")), _marks(),
                              a.attributes.clear())[1],
    "retype a result": lambda m, a, b: setattr(a.results[0], "type", _retyped(a.results[0])),
    "retype a block argument": lambda m, a, b: setattr(
        _func(m).regions[0].blocks[0].args[0], "type",
        _retyped(_func(m).regions[0].blocks[0].args[0])),
    "move_before": lambda m, a, b: b.move_before(a),
    "set_operand": lambda m, a, b: b.set_operand(0, a.operands[0]),
    "set_operands": lambda m, a, b: b.set_operands([a.operands[0]]),
    "erase_operands": lambda m, a, b: b.erase_operands([0]),
    "set_operands of an op without operands": lambda m, a, b: _func(m).set_operands(
        [a.results[0]]),
    "drop_all_references": lambda m, a, b: b.drop_all_references(),
    "replace_all_uses_with": lambda m, a, b: a.results[0].replace_all_uses_with(a.operands[0]),
    "insert_after": lambda m, a, b: a.parent.insert_after(
        a, Operation("stablehlo.negate", [a.results[0]], [a.results[0].type])),
    "erase": lambda m, a, b: (b.results[0].replace_all_uses_with(a.results[0]), _marks(),
                              b.erase())[1],
    "detach": lambda m, a, b: (b.results[0].replace_all_uses_with(a.results[0]),
                               _marks(), b.detach())[1],
    "add_argument": lambda m, a, b: _func(m).regions[0].blocks[0].add_argument(a.results[0].type),
    "insert_argument": lambda m, a, b: _func(m).regions[0].blocks[0].insert_argument(
        0, a.results[0].type),
    "erase_argument": lambda m, a, b: (_func(m).regions[0].blocks[0].add_argument(
        a.results[0].type), _marks(), _func(m).regions[0].blocks[0].erase_argument(1))[1],
    "add_region": lambda m, a, b: a.add_region(Region()),
    "take_regions": lambda m, a, b: _func(m).take_regions(),
    "add_block": lambda m, a, b: _func(m).regions[0].add_block(Block()),
    "remove_block": lambda m, a, b: _func(m).regions[0].remove_block(
        _func(m).regions[0].blocks[0]),
    "take_blocks": lambda m, a, b: _func(m).regions[0].take_blocks(),
}


# the edits of CHANGES that change no structure (what ops are where and what they use)
CONTENT_ONLY = {"set an attribute", "set_attr", "remove_attr", "del an attribute",
                "setdefault of a new name", "update", "|=", "popitem", "clear",
                "retype a result", "retype a block argument"}


@pytest.mark.parametrize("edit", CHANGES, ids=str)
def test_every_api_edit_moves_the_count_and_the_snapshot(edit):
    """An edit moves the count when the snapshot (what the verifier reads) changes, and
    the structure count unless it only set attributes or types; some edits need an edit
    first (an attribute to remove), after which the count is read."""
    module = parse_module(MODULE)
    a, b = _ops(module)
    before, structure, snapshot = change_count(), structure_count(), ir_snapshot(module)
    marks = CHANGES[edit](module, a, b)
    if isinstance(marks, tuple):  # the counts after the preparing edit
        (before, structure), snapshot = marks, None
    assert change_count() != before
    assert (structure_count() == structure) == (edit in CONTENT_ONLY)
    if snapshot is not None:
        assert not unchanged_since(snapshot, module)


NO_CHANGES = {
    "the same attribute again": lambda a: a.attributes.__setitem__(
        "x", a.attributes["x"]),
    "an equal attribute": lambda a: a.attributes.__setitem__("x", StringAttr("y")),
    "pop of an absent name": lambda a: a.attributes.pop("absent", None),
    "setdefault of a present name": lambda a: a.attributes.setdefault("x", StringAttr("z")),
    "reads": lambda a: (a.attributes.get("x"), a.results[0].type, a.operands, list(a.parent)),
    "an op built but not inserted": lambda a: Operation(
        "stablehlo.negate", [a.results[0]], [a.results[0].type], {"x": StringAttr("y")}),
}


@pytest.mark.parametrize("edit", NO_CHANGES, ids=str)
def test_what_leaves_the_ir_as_it_was_does_not_move_the_count(edit):
    module = parse_module(MODULE)
    a, _ = _ops(module)
    a.attributes["x"] = StringAttr("y")
    before, snapshot = change_count(), ir_snapshot(module)
    NO_CHANGES[edit](a)
    assert unchanged_since(snapshot, module)
    assert change_count() == before


def test_an_op_copies_a_plain_attribute_dict():
    """An op owns its attributes: the dict it was built from is copied into a counting one."""
    plain = {"x": StringAttr("y")}
    op = Operation("test.op", attributes=plain)
    plain["z"] = StringAttr("w")
    assert list(op.attributes) == ["x"]
    assert type(op.clone().attributes) is type(op.attributes)


def _random_equal_attribute(a, b, pick):
    if "x" in a.attributes:
        a.attributes["x"] = StringAttr(a.attributes["x"].value)


def _random_move(a, b, pick):
    if a is not b and a.parent is b.parent:
        a.move_before(b)


def _random_reroute(a, b, pick):
    if a.operands and b.is_before_in_block(a):
        a.set_operand(0, b.results[0])


# edits of a random op ``a`` given another ``b`` and a number; some may do nothing
_RANDOM_EDITS = {
    "set_attr": lambda a, b, pick: a.set_attr("x", StringAttr(str(pick % 3))),
    "move_before": _random_move,
    "set_operand": _random_reroute,
    "insert_after": lambda a, b, pick: a.parent.insert_after(
        a, Operation("stablehlo.negate", [a.results[0]], [a.results[0].type])),
    "retype a result": lambda a, b, pick: setattr(
        a.results[0], "type", _retyped(a.results[0]) if pick % 2 else a.results[0].type),
    "remove_attr": lambda a, b, pick: a.remove_attr("x"),
    "an equal attribute": _random_equal_attribute,
}


@settings(max_examples=examples(40))
@given(seed=st.integers(0, 10**6),
       kinds=st.lists(st.sampled_from(sorted(_RANDOM_EDITS)), max_size=6),
       picks=st.lists(st.integers(0, 10**6), min_size=6, max_size=6))
def test_random_edits_of_random_programs_move_the_count_when_the_snapshot_changes(
        seed, kinds, picks):
    module = parse_module(random_program(seed))
    ops = [op for op in module.walk() if op.name.startswith("stablehlo.") and op.results]
    for kind, pick in zip(kinds, picks):
        if len(ops) < 2:
            break
        before, snapshot = change_count(), ir_snapshot(module)
        _RANDOM_EDITS[kind](ops[pick % len(ops)], ops[(pick // 7) % len(ops)], pick)
        if not unchanged_since(snapshot, module):
            assert change_count() != before, kind


def _run(module, pass_run, monkeypatch, cross_check: bool):
    """Run a one-pass pipeline whose pass is ``pass_run``, verifying with a log."""
    from dataclasses import dataclass

    from shardy_ref.ir.change_count import CROSS_CHECK_ENV as CROSS_CHECK_CHANGES
    from shardy_ref.pass_manager import (
        PASSES,
        Pass,
        PassContext,
        PassManager,
        parse_pipeline,
    )

    @dataclass(frozen=True)
    class _Edit(Pass):
        NAME = "test-edit"

        def run(self, op, ctx):
            pass_run(op)

    if cross_check:
        monkeypatch.setenv(CROSS_CHECK_CHANGES, "1")
    else:
        monkeypatch.delenv(CROSS_CHECK_CHANGES, raising=False)
    verified = []
    monkeypatch.setitem(PASSES, "test-edit", _Edit)
    PassManager(parse_pipeline("test-edit,test-edit"),
                verify=lambda op: verified.append(op)).run(module, PassContext())
    return verified


def _rename(op):
    """An edit outside the IR API (op names are fixed once built, as in MLIR): the first
    op swaps between two names."""
    first = _ops(op)[0]
    first.name = "stablehlo.abs" if first.name == "stablehlo.negate" else "stablehlo.negate"


def test_the_pass_manager_skips_the_verifier_when_nothing_was_counted(monkeypatch):
    module = parse_module(MODULE)
    assert len(_run(module, lambda op: None, monkeypatch, cross_check=False)) == 1
    assert len(_run(module, lambda op: _ops(op)[0].set_attr("x", StringAttr(
        str(change_count()))), monkeypatch, cross_check=False)) == 2
    # outside the API: not seen unless cross-checked against a snapshot
    assert len(_run(module, _rename, monkeypatch, cross_check=False)) == 1
    with pytest.raises(IRError, match="test-edit changed the IR without the change count"):
        _run(parse_module(MODULE), _rename, monkeypatch, cross_check=True)


class _Touch(Pass):
    """Sets a new attribute: a change of content only."""
    NAME = "test-touch"

    def run(self, op, ctx):
        _ops(op)[0].set_attr("x", StringAttr(str(change_count())))


class _Break(Pass):
    """Moves an op before the op defining its operand: a change of structure."""
    NAME = "test-break"

    def run(self, op, ctx):
        a, b = _ops(op)
        b.move_before(a)


@pytest.mark.parametrize("pipeline", ["test-break", "test-touch,test-break",
                                      "test-touch,test-touch,test-break"])
def test_a_counted_change_is_verified(pipeline, monkeypatch):
    """The verifier runs after the pass that broke the IR, not at some later pass, and
    checks dominance again after a change of structure."""
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.pass_manager import PASSES, PassContext, PassManager, parse_pipeline

    monkeypatch.setitem(PASSES, "test-break", _Break)
    monkeypatch.setitem(PASSES, "test-touch", _Touch)
    with pytest.raises(VerifyError, match="operand #0 does not dominate this use"):
        PassManager(parse_pipeline(pipeline), verify=verify_module).run(
            parse_module(MODULE), PassContext())


def test_dominance_is_checked_again_only_after_a_change_of_structure(monkeypatch):
    from shardy_ref.ir.verify import core, verify_module
    from shardy_ref.pass_manager import PASSES, PassContext, PassManager, parse_pipeline

    checked = []
    dominance = core.verify_dominance
    monkeypatch.setattr(core, "verify_dominance",
                        lambda op, ctx: (checked.append(op), dominance(op, ctx)))
    monkeypatch.setitem(PASSES, "test-touch", _Touch)
    monkeypatch.setitem(PASSES, "test-insert", _Insert)
    PassManager(parse_pipeline("test-touch,test-touch,test-insert,test-touch"),
                verify=verify_module).run(parse_module(MODULE), PassContext())
    assert len(checked) == 2


class _Insert(Pass):
    """Inserts a negate of the first op's result after it: a valid change of structure."""
    NAME = "test-insert"

    def run(self, op, ctx):
        a, _ = _ops(op)
        a.parent.insert_after(a, Operation("stablehlo.negate", [a.results[0]],
                                           [a.results[0].type]))


IOTA = """func.func @main() -> tensor<8xf32> {
  %c = stablehlo.constant dense<[8]> : tensor<1xi64>
  %0 = stablehlo.dynamic_iota %c, dim = 0 : (tensor<1xi64>) -> tensor<8xf32>
  %1 = stablehlo.abs %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
"""


def _iota_ops(module):
    return [op for op in module.walk() if op.name.startswith("stablehlo.")]


# edits of the IOTA module -> the ops (by index in _iota_ops: constant, iota, abs) whose
# stamps they must move: the op changed and, for its attributes and result types, the ops
# reading them as operands
STAMPED = {
    "constant's value": (lambda c, i, a: c.set_attr("value", c.attributes["value"]), ()),
    "constant's new attribute": (lambda c, i, a: c.set_attr("x", StringAttr("y")), (0, 1)),
    "iota's result type": (lambda c, i, a: setattr(i.results[0], "type", _retyped(
        i.results[0])), (1, 2)),
    "abs's operand": (lambda c, i, a: a.set_operand(0, i.results[0]), (2,)),
    "abs moved": (lambda c, i, a: a.move_before(i), (2,)),
    "abs's operand erased": (lambda c, i, a: a.erase_operands([0]), (2,)),
    "constant's operands set": (lambda c, i, a: c.set_operands([a.results[0]]), (0,)),
    "iota's region added": (lambda c, i, a: i.add_region(Region()), (1,)),
    "iota's regions taken": (lambda c, i, a: i.take_regions(), (1,)),
    "abs's attribute removed": (lambda c, i, a: (a.set_attr("x", StringAttr("y")),
                                                 a.remove_attr("x")), (2,)),
}


@pytest.mark.parametrize("edit", STAMPED, ids=str)
def test_an_edit_moves_the_stamps_of_the_ops_whose_checks_read_it(edit):
    ops = _iota_ops(parse_module(IOTA))
    before = [op._stamp for op in ops]
    change, moved = STAMPED[edit]
    change(*ops)
    assert [i for i, op in enumerate(ops) if op._stamp != before[i]] == list(moved)


# edits of discardable attributes of the IOTA module -> the ops whose _dstamp they move
# (and no op's _stamp: only the dialect's check of the attribute reads it)
DISCARDABLE = {
    "constant's sharding set": (lambda c, i, a: c.set_attr("sdy.sharding", StringAttr("y")),
                                (0,)),
    "abs's sharding popped": (lambda c, i, a: (a.set_attr("sdy.x", StringAttr("y")),
                                               a.attributes.pop("sdy.x")), (2,)),
    "iota's attribute deleted": (lambda c, i, a: (i.set_attr("sdy.x", StringAttr("y")),
                                                  i.attributes.__delitem__("sdy.x")), (1,)),
}


@pytest.mark.parametrize("edit", DISCARDABLE, ids=str)
def test_a_discardable_attribute_moves_only_its_ops_discardable_stamp(edit):
    ops = _iota_ops(parse_module(IOTA))
    stamps = [op._stamp for op in ops]
    dstamps = [op._dstamp for op in ops]
    count = change_count()
    change, moved = DISCARDABLE[edit]
    change(*ops)
    assert change_count() > count
    assert [op._stamp for op in ops] == stamps
    assert [i for i, op in enumerate(ops) if op._dstamp != dstamps[i]] == list(moved)


def test_a_stamped_op_is_verified_again_when_its_sharding_changes(monkeypatch):
    """The abs (memoised and stamped after the first pass) gets a sharding naming an axis
    the mesh lacks: only its discardable stamp moved, and its sharding is checked."""
    from shardy_ref.ir.sdy_sharding import TensorShardingPerValue
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_attribute
    from shardy_ref.pass_manager import PASSES, PassContext, PassManager, parse_pipeline

    class _Shard(Pass):
        NAME = "test-shard"

        def run(self, op, ctx):
            sharding = parse_attribute('#sdy.sharding_per_value<[<@mesh, [{"y"}]>]>')
            assert isinstance(sharding, TensorShardingPerValue)
            _ops(op)[1].set_attr("sdy.sharding", sharding)

    monkeypatch.setitem(PASSES, "test-touch", _Touch)
    monkeypatch.setitem(PASSES, "test-shard", _Shard)
    with pytest.raises(VerifyError, match="unknown axis name"):
        PassManager(parse_pipeline("test-touch,test-shard"),
                    verify=verify_module).run(parse_module(MODULE), PassContext())


@pytest.mark.parametrize("pipeline", ["test-shrink", "test-touch-abs,test-shrink"])
def test_a_memoised_op_is_verified_again_when_an_operand_it_reads_changes(pipeline,
                                                                          monkeypatch):
    """The iota's shape operand, a constant, changes: the iota (memoised and stamped after
    the first pass) must be checked again though nothing of its own changed."""
    from shardy_ref.ir.builtin_attrs import DenseElementsAttr
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.pass_manager import PASSES, PassContext, PassManager, parse_pipeline

    class _Shrink(Pass):
        NAME = "test-shrink"

        def run(self, op, ctx):
            constant = _iota_ops(op)[0]
            old = constant.attributes["value"]
            constant.set_attr("value", DenseElementsAttr.from_values(old.type, [4]))

    class _TouchAbs(Pass):
        NAME = "test-touch-abs"

        def run(self, op, ctx):
            _iota_ops(op)[2].set_attr("x", StringAttr("y"))

    monkeypatch.setitem(PASSES, "test-shrink", _Shrink)
    monkeypatch.setitem(PASSES, "test-touch-abs", _TouchAbs)
    with pytest.raises(VerifyError, match=r"output shape \[4\] is incompatible"):
        PassManager(parse_pipeline(pipeline), verify=verify_module).run(
            parse_module(IOTA), PassContext())


def test_cross_checking_catches_a_change_the_stamp_missed(monkeypatch):
    """The iota's result type set behind the API (on the slot), with its shape operand
    changed to match through the API: the abs using the iota moves no stamp, and with the
    cross-check on the verifier reports it rather than skipping the abs."""
    from shardy_ref.ir.builtin_attrs import DenseElementsAttr
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.pass_manager import PASSES, PassContext, PassManager, parse_pipeline

    class _Sneak(Pass):
        NAME = "test-sneak"

        def run(self, op, ctx):
            constant, iota, _ = _iota_ops(op)
            iota.results[0]._type = _retyped(iota.results[0])
            old = constant.attributes["value"]
            constant.set_attr("value", DenseElementsAttr.from_values(old.type, [4]))

    monkeypatch.setitem(PASSES, "test-touch", _Touch)
    monkeypatch.setitem(PASSES, "test-sneak", _Sneak)
    with pytest.raises(IRError, match=r"'stablehlo\.abs' changed without its stamp moving"):
        PassManager(parse_pipeline("test-touch,test-sneak"), verify=verify_module).run(
            parse_module(IOTA), PassContext())


def test_a_memoised_op_is_verified_again_when_its_mesh_changes(monkeypatch):
    """The mesh an op's sharding names loses the sharding's axis: the op (memoised and
    stamped after the first pass) must be checked again though nothing of it changed."""
    from shardy_ref.ir.sdy_axes import Mesh, MeshAxis
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.pass_manager import PASSES, PassContext, PassManager, parse_pipeline

    class _Rename(Pass):
        NAME = "test-rename-axis"

        def run(self, op, ctx):
            mesh = next(o for o in op.walk() if o.name == "sdy.mesh")
            mesh.set_attr("mesh", Mesh((MeshAxis("y", 2),)))

    monkeypatch.setitem(PASSES, "test-touch", _Touch)
    monkeypatch.setitem(PASSES, "test-rename-axis", _Rename)
    text = MODULE.replace("stablehlo.negate %arg0 :", "stablehlo.negate %arg0 "
                          '{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} :')
    with pytest.raises(VerifyError, match="unknown axis name"):
        PassManager(parse_pipeline("test-touch,test-rename-axis"), verify=verify_module).run(
            parse_module(text), PassContext())


@pytest.mark.parametrize(("value", "on"), [("1", True), ("yes", True), ("0", False),
                                           ("", False), (None, False)])
def test_the_cross_check_switch(value, on, monkeypatch):
    from shardy_ref.ir.change_count import CROSS_CHECK_ENV, cross_checking

    if value is None:
        monkeypatch.delenv(CROSS_CHECK_ENV, raising=False)
    else:
        monkeypatch.setenv(CROSS_CHECK_ENV, value)
    assert cross_checking() is on


# --- roots verified since the last change ------------------------------------------------

class _TouchAny(_Touch):
    """:class:`_Touch` on whatever op the pipeline nests it in."""
    NAME = "test-touch-any"
    ANCHOR = "any"


class _Nothing(Pass):
    """Changes nothing, on whatever op it is nested in."""
    NAME = "test-nothing"
    ANCHOR = "any"

    def run(self, op, ctx):
        pass


def _walked_roots(pipeline: str, monkeypatch) -> list[list[str]]:
    """The roots each verify of ``pipeline`` (on MODULE) walked, by name, one list per
    verify."""
    from shardy_ref.ir import verify
    from shardy_ref.pass_manager import PASSES, PassContext, PassManager, parse_pipeline

    verifies: list[list[str]] = []
    walk = verify._walk

    def recording(root, ctx, deferred):
        verifies[-1].append(root.name)
        walk(root, ctx, deferred)

    def verify_module(op):
        verifies.append([])
        verify.verify_module(op)

    monkeypatch.setattr(verify, "_walk", recording)
    monkeypatch.setitem(PASSES, "test-touch-any", _TouchAny)
    monkeypatch.setitem(PASSES, "test-nothing", _Nothing)
    monkeypatch.setitem(PASSES, "test-break", _Break)
    PassManager(parse_pipeline(pipeline), verify=verify_module).run(parse_module(MODULE),
                                                                    PassContext())
    return verifies


def test_the_modules_verify_skips_a_function_verified_since_the_last_change(monkeypatch):
    assert _walked_roots("test-touch-any,func.func(test-touch-any),test-nothing",
                         monkeypatch) == [["builtin.module", "func.func"], ["func.func"],
                                          ["builtin.module"]]


def test_a_functions_verify_is_skipped_after_the_modules_since_the_last_change(monkeypatch):
    assert _walked_roots("func.func(test-touch-any),test-touch-any,func.func(test-nothing)",
                         monkeypatch) == [["func.func"], ["builtin.module", "func.func"], []]


def test_a_change_after_a_functions_verify_is_verified(monkeypatch):
    assert _walked_roots("func.func(test-touch-any),test-touch-any", monkeypatch) == [
        ["func.func"], ["builtin.module", "func.func"]]
    with pytest.raises(VerifyError, match="operand #0 does not dominate this use"):
        _walked_roots("func.func(test-touch-any),test-break", monkeypatch)


def test_cross_checking_catches_a_change_of_a_verified_function_the_count_missed(
        monkeypatch):
    class _RenameAny(Pass):
        NAME = "test-rename-any"
        ANCHOR = "any"

        def run(self, op, ctx):
            _rename(op)

    from shardy_ref.pass_manager import PASSES
    monkeypatch.setitem(PASSES, "test-rename-any", _RenameAny)
    monkeypatch.setenv("SHARDY_REF_CROSS_CHECK_CHANGES", "1")
    with pytest.raises(IRError, match=r"'func\.func' changed without the change count moving"):
        _walked_roots("func.func(test-touch-any),test-rename-any", monkeypatch)


# --- region ops and terminators: all their checks memoised under one key ------------------

REDUCE = """func.func @main(%arg0: tensor<8x4xf32>) -> tensor<8xf32> {
  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = [1]
      : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = stablehlo.abs %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
"""


class _TouchAbsAny(Pass):
    """Sets a new attribute on the first ``stablehlo.abs``: the reduce and the returns
    are left alone."""
    NAME = "test-touch-abs-any"
    ANCHOR = "any"

    def run(self, op, ctx):
        next(o for o in op.walk() if o.name == "stablehlo.abs").set_attr(
            "x", StringAttr(str(change_count())))


def _run_reduce(pipeline: str, monkeypatch, passes=()) -> list[str]:
    """Run ``pipeline`` on REDUCE; the names of the ops whose own checks ran."""
    from shardy_ref.ir import verify
    from shardy_ref.pass_manager import PASSES, PassContext, PassManager, parse_pipeline

    checked: list[str] = []
    verify_op = verify.verify_op

    def recording(op, ctx):
        checked.append(op.name)
        verify_op(op, ctx)

    monkeypatch.setattr(verify, "verify_op", recording)
    monkeypatch.setitem(PASSES, "test-touch-abs-any", _TouchAbsAny)
    for p in passes:
        monkeypatch.setitem(PASSES, p.NAME, p)
    PassManager(parse_pipeline(pipeline), verify=verify.verify_module).run(
        parse_module(REDUCE), PassContext())
    return checked


def test_a_region_op_and_its_body_are_not_checked_again_when_nothing_of_them_changed(
        monkeypatch):
    monkeypatch.setenv("SHARDY_REF_CROSS_CHECK_CHANGES", "0")
    checked = _run_reduce("test-touch-abs-any,test-touch-abs-any", monkeypatch)
    assert checked.count("stablehlo.reduce") == 1
    assert checked.count("stablehlo.return") == 1


class _RetypeBody(Pass):
    """Makes the reduce's body an i32 add: consistent in itself, not with the reduce."""
    NAME = "test-retype-body"

    def run(self, op, ctx):
        from shardy_ref.ir.types import IntegerType

        reduce = next(o for o in op.walk() if o.name == "stablehlo.reduce")
        i32 = RankedTensorType((), IntegerType(32))
        block = reduce.regions[0].blocks[0]
        for arg in block.args:
            arg.type = i32
        block.first_op.results[0].type = i32


class _RetypeFunc(Pass):
    """Gives the function a result type its return does not return."""
    NAME = "test-retype-func"

    def run(self, op, ctx):
        from shardy_ref.ir.builtin_attrs import TypeAttr
        from shardy_ref.ir.types import FunctionType

        func = _func(op)
        old = func.attributes["function_type"].value
        func.set_attr("function_type", TypeAttr(FunctionType(
            old.inputs, (RankedTensorType((4,), old.results[0].element_type),))))


@pytest.mark.parametrize(("edit", "message"), [
    (_RetypeBody, "reduction|type"),
    (_RetypeFunc, "doesn't match function result type")])
def test_a_region_op_or_terminator_is_checked_again_when_what_it_reads_changed(
        edit, message, monkeypatch):
    """After a first verify memoised the reduce and both returns: its body changes (only
    ops nested in it move their stamps), or the function the return ends does."""
    with pytest.raises(VerifyError, match=message):
        _run_reduce(f"test-touch-abs-any,{edit.NAME}", monkeypatch, [edit])
