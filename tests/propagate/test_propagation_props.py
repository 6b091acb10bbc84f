"""Properties of propagation on random programs (``shardy_ref/testing/programs.py``): user
shardings are only ever extended, closed dimensions and replicated axes are respected, the
output verifies and is a fixpoint; and, against real Shardy, the same output (issue 6)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from shardy_ref.ir.func_attrs import function_type
from shardy_ref.ir.value_sharding import get_func_result_sharding, get_sharding
from shardy_ref.parser import parse_module
from shardy_ref.propagate.sharding_projection import PrefixStatus, axis_list_prefix_status
from shardy_ref.testing.programs import programs, random_program

from .pass_helpers import run_pipeline

STRATEGIES = ["sdy-basic-propagate", "sdy-aggressive-propagate", "sdy-op-priority-propagate",
              "sdy-user-priority-propagate"]
# the whole pipeline (import, user-priority propagation, export with explicit reshards)
DIFFERENTIAL = [*STRATEGIES, "sdy-propagation-pipeline"]


def user_shardings(text: str) -> list:
    """The shardings of ``@main``'s arguments and results and of every sharding
    constraint, in order (None where there is none)."""
    module = parse_module(text, "p.mlir")
    func = next(op for op in module.walk() if op.name == "func.func")
    out = [get_sharding(a) for a in func.regions[0].blocks[0].args]
    out += [get_func_result_sharding(func, i) for i in range(len(function_type(func).results))]
    out += [op.attributes["sharding"] for op in func.walk()
            if op.name == "sdy.sharding_constraint"]
    return out


def all_shardings(text: str) -> list:
    module = parse_module(text, "p.mlir")
    return [s for op in module.walk() for s in map(get_sharding, op.results) if s is not None]


def assert_extends(before, after) -> None:
    """``after`` keeps ``before``'s closed dimensions and replicated axes, and each open
    dimension's axes extend ``before``'s (``"b":(1)2`` may grow into ``"b"``)."""
    if before is None:
        return
    assert after is not None
    assert after.replicated_axes == before.replicated_axes
    for old, new in zip(before.dim_shardings, after.dim_shardings, strict=True):
        if old.is_closed:
            assert new.axes == old.axes and new.is_closed
        else:
            assert axis_list_prefix_status(old.axes, new.axes) is not \
                PrefixStatus.NOT_A_PREFIX, (old, new)


@pytest.mark.parametrize("pipeline", STRATEGIES)
@settings(max_examples=25, deadline=None)
@given(text=programs())
def test_user_shardings_are_only_extended_and_output_is_a_fixpoint(pipeline, text):
    out = run_pipeline(text, pipeline)  # verifies after the pass
    for before, after in zip(user_shardings(text), user_shardings(out), strict=True):
        assert_extends(before, after)
    for sharding in all_shardings(out):
        used = {a.name for d in sharding.dim_shardings for a in d.axes}
        assert not used & {a.name for a in sharding.replicated_axes}
    assert run_pipeline(out, pipeline) == out


@pytest.mark.oracle
@pytest.mark.parametrize("pipeline", DIFFERENTIAL)
def test_random_programs_like_real_shardy(pipeline):
    import corpus

    seeds = range(200)
    texts = [random_program(seed) for seed in seeds]
    refs = corpus.oracle_print([(t, False) for t in texts],
                               pipeline=f"builtin.module({pipeline})")
    differ = [seed for seed, text, ref in zip(seeds, texts, refs, strict=True)
              if not ref["ok"] or run_pipeline(text, pipeline) != ref["out"]]
    agree = 100 * (len(texts) - len(differ)) / len(texts)
    print(f"{pipeline}: {agree:.1f}% of {len(texts)} random programs identical to real Shardy")
    assert agree >= 95, f"differing seeds: {differ}"
