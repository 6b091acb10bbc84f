"""Pass options and pipeline strings, as mlir-opt spells them."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.pass_manager import PASS_MODULES, PASSES, Pass, make_pass, parse_pipeline


@dataclass(frozen=True)
class _OptionsPass(Pass):
    NAME = "test-options"
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
