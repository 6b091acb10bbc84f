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


def test_a_pipeline_runs_its_passes_in_order_verifying_after_each():
    from shardy_ref.ir.operation import Operation
    from shardy_ref.pass_manager import PassContext, PassManager, PassPipeline, passes

    log = []

    @dataclass(frozen=True)
    class _Record(Pass):
        NAME = "test-record"
        tag: str = ""

        def run(self, op, ctx):
            log.append(self.tag)

    @dataclass(frozen=True)
    class _Pipe(PassPipeline):
        NAME = "test-pipe"

        def elements(self):
            return passes(("test-record", "tag=a"), ("test-record", "tag=b"))

    PASSES.update({"test-record": _Record, "test-pipe": _Pipe})
    try:
        module = Operation("builtin.module")
        PassManager(parse_pipeline("test-pipe,test-record{tag=c}"),
                    verify=lambda op: log.append("verify")).run(module, PassContext())
    finally:
        del PASSES["test-record"], PASSES["test-pipe"]
    assert log == ["a", "verify", "b", "verify", "c", "verify"]


def test_unimplemented_pass_module_is_a_pass_error():
    PASS_MODULES["test-missing"] = "shardy_ref.no_such_module"
    try:
        with pytest.raises(PassError, match="does not refer to a registered pass"):
            make_pass("test-missing")
    finally:
        del PASS_MODULES["test-missing"]
