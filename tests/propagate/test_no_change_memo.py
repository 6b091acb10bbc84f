"""The propagator's no-change memo (``Propagator._repeats_no_change``) skips only steps
that would change nothing: the pipeline's output is the same with it off."""
from __future__ import annotations

import glob
import os

import pytest

from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module
from shardy_ref.parser.printer import print_module
from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline
from shardy_ref.propagate.basic_propagation import Propagator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(f"{ROOT}/examples/*.mlir") + glob.glob(f"{ROOT}/examples/jax/*.mlir")
               + glob.glob(f"{ROOT}/examples/shard_map/*.mlir"))


def _propagated(text: str) -> str:
    module = parse_module(text)
    PassManager(parse_pipeline("sdy-propagation-pipeline"), verify=verify_module).run(
        module, PassContext())
    return print_module(module)


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_same_output_without_the_memo(path, monkeypatch):
    text = open(path).read()
    memoised = _propagated(text)
    monkeypatch.setattr(Propagator, "_repeats_no_change", lambda *_: False)
    assert memoised == _propagated(text)
