"""Pass options and pipeline strings, as mlir-opt spells them."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.pass_manager import PASS_MODULES, PASSES, Pass, make_pass, parse_pipeline


@dataclass(frozen=True)
class _OptionsPass(Pass):
    NAME = "test-options"
    ANCHOR = "any"  # nested in func.func below; an explicit pipeline checks anchors
    flag: bool = False
    count: int = 1
    label: str = ""
    names: tuple[str, ...] = ()


@pytest.fixture(autouse=True)
def _register():
    PASSES[_OptionsPass.NAME] = _OptionsPass
    PASS_MODULES[_OptionsPass.NAME] = __name__
    yield
    del PASSES[_OptionsPass.NAME], PASS_MODULES[_OptionsPass.NAME]


def test_options_convert_to_field_types():
    p = make_pass("test-options", "flag=true count=3 label=\"a b\" names=x,y")
    assert p == _OptionsPass(True, 3, "a b", ("x", "y"))
    assert make_pass("test-options", "flag").flag is True
    assert make_pass("test-options", "flag=0").flag is False


def test_bad_options_are_pass_errors():
    with pytest.raises(PassError, match="no such option nope"):
        make_pass("test-options", "nope=1")
    with pytest.raises(PassError, match="invalid value 'many' for option 'count'"):
        make_pass("test-options", "count=many")
    with pytest.raises(PassError, match="does not refer to a registered pass"):
        make_pass("no-such-pass")


def test_pipeline_strings():
    pipeline = parse_pipeline("builtin.module(test-options{count=2 flag=true},"
                              "func.func(test-options))")
    assert pipeline[0].pass_ == _OptionsPass(True, 2)
    assert pipeline[1].op_name == "func.func"
    assert pipeline[1].nested[0].pass_ == _OptionsPass()
    assert parse_pipeline("test-options")[0].pass_ == _OptionsPass()
    with pytest.raises(PassError):
        parse_pipeline("builtin.module(test-options")


def test_a_pipeline_runs_its_passes_in_order_verifying_after_each_change():
    from shardy_ref.ir.builtin_attrs import StringAttr
    from shardy_ref.ir.operation import Operation
    from shardy_ref.pass_manager import PassContext, PassManager, PassPipeline, passes

    log = []

    @dataclass(frozen=True)
    class _Record(Pass):
        """Logs its tag and writes it on the module (a change), unless it is "same"."""
        NAME = "test-record"
        tag: str = ""

        def run(self, op, ctx):
            log.append(self.tag)
            if self.tag != "same":
                op.attributes["tag"] = StringAttr(self.tag)

    @dataclass(frozen=True)
    class _Pipe(PassPipeline):
        NAME = "test-pipe"

        def elements(self):
            return passes(("test-record", "tag=a"), ("test-record", "tag=b"))

    PASSES.update({"test-record": _Record, "test-pipe": _Pipe})
    try:
        module = Operation("builtin.module")
        PassManager(parse_pipeline("test-pipe,test-record{tag=same},test-record{tag=c}"),
                    verify=lambda op: log.append("verify")).run(module, PassContext())
    finally:
        del PASSES["test-record"], PASSES["test-pipe"]
    assert log == ["a", "verify", "b", "verify", "same", "c", "verify"]


MODULE = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  %1 = stablehlo.abs %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
"""


def _edits():
    """IR edits, each of which the verifier could see: the snapshot must tell them apart
    from the IR before."""
    from shardy_ref.ir.builtin_attrs import StringAttr
    from shardy_ref.ir.operation import Operation
    from shardy_ref.ir.types import RankedTensorType

    def ops(module):
        return [op for op in module.walk() if op.name.startswith("stablehlo.")]

    def set_attr(m):
        ops(m)[0].attributes["x"] = StringAttr("y")

    def retype(m):
        result = ops(m)[0].results[0]
        result.type = RankedTensorType((4,), result.type.element_type)

    def rename(m):
        ops(m)[1].name = "stablehlo.negate"

    def swap(m):
        a, b = ops(m)
        b.move_before(a)

    def reroute(m):
        a, b = ops(m)
        b.set_operand(0, a.operands[0])

    def insert(m):
        a, _ = ops(m)
        a.parent.insert_after(a, Operation("stablehlo.negate", [a.results[0]],
                                           [a.results[0].type]))

    def erase(m):
        b = ops(m)[1]
        b.results[0].replace_all_uses_with(b.operands[0])
        b.erase()

    def block_arg(m):
        func = next(op for op in m.walk() if op.name == "func.func")
        arg = func.regions[0].blocks[0].args[0]
        arg.type = RankedTensorType((4,), arg.type.element_type)

    return [set_attr, retype, rename, swap, reroute, insert, erase, block_arg, _rekey,
            _reorder, _properties]


def _stablehlo_ops(module):
    return [op for op in module.walk() if op.name.startswith("stablehlo.")]


def _rekey(m):
    """Two ops with the same attribute value; then one's attribute renamed."""
    from shardy_ref.ir.builtin_attrs import StringAttr

    a, b = _stablehlo_ops(m)
    a.attributes["x"] = b.attributes["x"] = StringAttr("y")
    return lambda: b.attributes.update(z=b.attributes.pop("x"))


def _reorder(m):
    """Two attributes with the same value; then their order swapped."""
    from shardy_ref.ir.builtin_attrs import StringAttr

    a = _stablehlo_ops(m)[0]
    a.attributes.update(x=StringAttr("y"), z=StringAttr("y"))
    return lambda: a.attributes.update(x=a.attributes.pop("x"))


def _properties(m):
    from shardy_ref.ir.builtin_attrs import StringAttr

    _stablehlo_ops(m)[0].properties = StringAttr("y")


@pytest.mark.parametrize("edit", _edits(), ids=lambda f: f.__name__)
def test_every_edit_changes_the_snapshot(edit):
    from shardy_ref.ir.ir_snapshot import ir_snapshot, unchanged_since
    from shardy_ref.parser import parse_module

    module = parse_module(MODULE)
    before = ir_snapshot(module)
    assert ir_snapshot(module) == before
    assert unchanged_since(before, module)
    second = edit(module)  # an edit of the edited IR, for edits that need some IR first
    if second is not None:
        before = ir_snapshot(module)
        assert unchanged_since(before, module)
        second()
    assert ir_snapshot(module) != before
    assert not unchanged_since(before, module)


def test_unimplemented_pass_module_is_a_pass_error():
    PASS_MODULES["test-missing"] = "shardy_ref.no_such_module"
    try:
        with pytest.raises(PassError, match="does not refer to a registered pass"):
            make_pass("test-missing")
    finally:
        del PASS_MODULES["test-missing"]


def test_an_integer_option_must_fit_64_bits():
    assert make_pass("canonicalize", f"max-iterations={2**63 - 1}").max_iterations == 2**63 - 1
    with pytest.raises(PassError, match="invalid value '9223372036854775808'"):
        make_pass("canonicalize", f"max-iterations={2**63}")


def test_what_a_pass_keeps_is_frozen_for_later_passes_and_unfrozen_after_the_run():
    """The pass manager re-freezes the heap between passes (``_refreeze_heap``): what one
    pass made and kept is out of the collector's generations while the next runs, and back
    in them once the pipeline ends."""
    import gc

    from shardy_ref.ir.operation import Operation
    from shardy_ref.pass_manager import PassContext, PassManager

    kept: list[list] = []
    seen: list[bool] = []

    def tracked(obj) -> bool:
        return any(o is obj for o in gc.get_objects())

    @dataclass(frozen=True)
    class _Keep(Pass):
        NAME = "test-keep"

        def run(self, op, ctx):
            kept.append([object()])
            seen.append(tracked(kept[0]))

    PASSES["test-keep"] = _Keep
    try:
        PassManager(parse_pipeline("test-keep,test-keep"), verify=lambda op: None).run(
            Operation("builtin.module"), PassContext())
    finally:
        del PASSES["test-keep"]
    assert seen == [True, False]
    assert tracked(kept[0]) and gc.get_freeze_count() == 0
