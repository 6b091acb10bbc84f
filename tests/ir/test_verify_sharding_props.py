"""Properties of the tensor-sharding verifier (spec 003 §3.3-§3.19, upstream verifiers.cc).

Valid shardings from ``shardy_ref/testing/strategies.py`` always verify on a function argument, a
``sdy.sharding_constraint`` and an op result; one mutation that breaks a single rule
is always rejected with that rule's message.
"""
from __future__ import annotations

import dataclasses
from bisect import bisect_right
from functools import cmp_to_key

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shardy_ref.ir import VerifyError
from shardy_ref.ir.sdy_axes import AxisRef, Mesh, SubAxisInfo
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.ir.types import TOKEN, RankedTensorType
from shardy_ref.ir.verify import collect_errors
from shardy_ref.ir.verify.sharding import mesh_less, verify_tensor_sharding
from shardy_ref.parser import parse_module
from shardy_ref.testing.strategies import (
    FREE_AXIS,
    meshes,
    proper_sub_axes,
    ranked_tensor_types,
    shardings_with_free_axis,
    tensor_shardings,
)

FAST = settings(max_examples=100, deadline=None)
SOME = settings(max_examples=50, deadline=None)  # one simple rule each
ARG = "'func.func' op arg 0 - "


def _type_for(sharding: TensorSharding, data) -> RankedTensorType:
    return data.draw(ranked_tensor_types(sharding.rank))


def arg_module(mesh: Mesh, sharding: TensorSharding, type_) -> str:
    """``@mesh`` and a function whose argument carries ``sharding``."""
    return (f"sdy.mesh @mesh = {mesh.params()}\n"
            f"func.func @f(%arg0: {type_} {{sdy.sharding = {sharding}}}) -> {type_} {{\n"
            f"  return %arg0 : {type_}\n}}\n")


def op_module(mesh: Mesh, shardings: list[TensorSharding], type_) -> str:
    """A ``sdy.sharding_constraint`` with the first sharding feeding a
    ``stablehlo.negate`` with all of them as ``sdy.sharding``."""
    per_value = ", ".join(s.params() for s in shardings)
    return (f"sdy.mesh @mesh = {mesh.params()}\n"
            f"func.func @f(%arg0: {type_}) -> {type_} {{\n"
            f"  %0 = sdy.sharding_constraint %arg0 {shardings[0].params()} : {type_}\n"
            f"  %1 = stablehlo.negate %0 {{sdy.sharding = #sdy.sharding_per_value<[{per_value}]>}}"
            f" : {type_}\n"
            f"  return %1 : {type_}\n}}\n")


def first_error(text: str) -> str | None:
    errors = collect_errors(parse_module(text))
    return errors[0].message if errors else None


# --- valid shardings verify ---------------------------------------------------------------

@FAST
@given(st.data())
def test_valid_sharding_on_func_arg_verifies(data):
    mesh = data.draw(meshes())
    sharding = data.draw(tensor_shardings(mesh, mesh_name=data.draw(st.sampled_from(
        ["mesh", None]))))
    text = arg_module(mesh, sharding, _type_for(sharding, data))
    assert first_error(text) is None, text


@FAST
@given(shardings_with_free_axis(), st.data())
def test_valid_sharding_on_ops_verifies(case, data):
    mesh, sharding = case
    text = op_module(mesh, [sharding], _type_for(sharding, data))
    assert first_error(text) is None, text


# --- one broken rule, one message -----------------------------------------------------------

def _place(sharding: TensorSharding, mesh: Mesh, refs: list[AxisRef], where: str,
           dim: int = 0) -> TensorSharding:
    """``sharding`` with ``refs`` appended to dim ``dim``, or inserted as a block at their
    sorted position in the replicated or unreduced axes."""
    if where == "dim":
        dims = list(sharding.dim_shardings)
        dims[dim] = dims[dim].replace(axes=dims[dim].axes + tuple(refs))
        return sharding.replace(dim_shardings=tuple(dims))
    axes = list(getattr(sharding, f"{where}_axes"))
    less = mesh_less(mesh)
    key = cmp_to_key(lambda a, b: -1 if less(a, b) else (1 if less(b, a) else 0))
    at = bisect_right([key(a) for a in axes], key(refs[0]))
    axes[at:at] = refs
    return sharding.replace(**{f"{where}_axes": tuple(axes)})


def _where(data, sharding: TensorSharding, lists=("dim", "replicated", "unreduced")):
    where = data.draw(st.sampled_from([w for w in lists if w != "dim" or sharding.rank]))
    dim = data.draw(st.integers(0, sharding.rank - 1)) if where == "dim" else 0
    return where, dim


def _free_size(mesh: Mesh) -> int:
    return mesh.axis_size(FREE_AXIS)


def _two_sub_axes(data, mesh: Mesh, overlapping: bool | None = None):
    """Two different valid sub-axes of the free axis, in order."""
    subs = proper_sub_axes(_free_size(mesh))
    pairs = [(a, b) for a in subs for b in subs
             if a < b and (overlapping is None or a.overlaps(b) == overlapping)]
    assume(pairs)
    return data.draw(st.sampled_from(pairs))


# Each mutation breaks one rule of a valid sharding on a mesh with an unused axis, and
# returns (sharding, type or None for a random one of its rank, message after "arg 0 - ").

def unknown_axis(mesh, sharding, data):
    bad = _place(sharding, mesh, [AxisRef("unknown")], *_where(data, sharding))
    return bad, None, 'unknown axis name: "unknown"'


def duplicate_axis(mesh, sharding, data):
    used = list(sharding.all_axes())
    axis = data.draw(st.sampled_from(used)) if used else AxisRef(FREE_AXIS)
    bad = _place(sharding, mesh, [axis], "unreduced")
    if not used:  # the unused axis twice
        bad = _place(bad, mesh, [axis], "unreduced")
    return bad, None, f"duplicate axis ref: {axis.params()}"


def sub_axis_not_dividing(mesh, sharding, data):
    size = _free_size(mesh)
    pre = data.draw(st.integers(1, 2 * size))
    k = data.draw(st.integers(2, 2 * size).filter(lambda k: size % (pre * k) != 0))
    axis = AxisRef(FREE_AXIS, SubAxisInfo(pre, k))
    bad = _place(sharding, mesh, [axis], *_where(data, sharding))
    return bad, None, (f"sub-axis next pre-size {pre * k} doesn't divide the size of the "
                       f"full axis {size}: {axis.params()}")


def bad_sub_axis_size(mesh, sharding, data):
    info, message = data.draw(st.sampled_from([
        (SubAxisInfo(1, _free_size(mesh)), "sub-axis size is equal to the full axis size"),
        (SubAxisInfo(2, 1), "sub-axis sizes must be greater than 1"),
        (SubAxisInfo(0, 2), "sub-axis pre-size must be at least 1")]))
    axis = AxisRef(FREE_AXIS, info)
    bad = _place(sharding, mesh, [axis], *_where(data, sharding))
    return bad, None, f"{message}: {axis.params()}"


def overlapping_sub_axes(mesh, sharding, data):
    a, b = _two_sub_axes(data, mesh, overlapping=True)
    bad = _place(sharding, mesh, [a], *_where(data, sharding))
    bad = _place(bad, mesh, [b], *_where(data, bad, ("replicated", "unreduced")))
    return bad, None, f"overlapping sub-axes: {a.params()}, {b.params()}"


def mergeable_sub_axes(mesh, sharding, data):
    subs = proper_sub_axes(_free_size(mesh))
    a, b = data.draw(st.sampled_from([(a, b) for a in subs for b in subs if a.can_merge(b)]))
    bad = _place(sharding, mesh, [a, b], *_where(data, sharding))
    return bad, None, f"two consecutive sub-axes can be merged: {a.params()}, {b.params()}"


def full_and_sub_axis(mesh, sharding, data):
    sub = data.draw(st.sampled_from(proper_sub_axes(_free_size(mesh))))
    bad = _place(sharding, mesh, [AxisRef(FREE_AXIS)], *_where(data, sharding))
    bad = _place(bad, mesh, [sub], *_where(data, bad, ("replicated", "unreduced")))
    return bad, None, f'both sub-axis and full-axis are used for axis name: "{FREE_AXIS}"'


def unsorted_axes(mesh, sharding, data):
    a, b = _two_sub_axes(data, mesh)
    where = data.draw(st.sampled_from(["replicated", "unreduced"]))
    return _place(sharding, mesh, [b, a], where), None, f"{where} axes are not ordered w.r.t. mesh"


def priority_on_empty_closed_dim(mesh, sharding, data):
    sharding = sharding if sharding.rank else TensorSharding.fully_open(sharding.mesh_or_ref, 1)
    dim = data.draw(st.integers(0, sharding.rank - 1))
    dims = list(sharding.dim_shardings)
    dims[dim] = DimensionSharding((), True, data.draw(st.integers(0, 9)))
    bad = sharding.replace(dim_shardings=tuple(dims))
    return bad, None, f"dim {dim} is empty and closed but has a priority"


def rank_mismatch(mesh, sharding, data):
    rank = data.draw(st.integers(0, 5).filter(lambda r: r != sharding.rank))
    return (sharding, data.draw(ranked_tensor_types(rank)),
            f"sharding doesn't match tensor rank: {sharding.rank} != {rank}")


def non_shaped_type(mesh, sharding, data):
    if not (sharding.rank or sharding.replicated_axes or sharding.unreduced_axes):
        sharding = _place(sharding, mesh, [AxisRef(FREE_AXIS)], "replicated")
    return sharding, TOKEN, ("non-shaped tensors can only have a sharding with rank 0 and no "
                             f"replicated or unreduced axes. type: '{TOKEN}', sharding: "
                             f"{sharding}")


def unknown_mesh(mesh, sharding, data):
    return sharding.replace(mesh_or_ref="other"), None, "unknown mesh: @other"


MUTATIONS = (unknown_axis, duplicate_axis, sub_axis_not_dividing, bad_sub_axis_size,
             overlapping_sub_axes, mergeable_sub_axes, full_and_sub_axis, unsorted_axes,
             priority_on_empty_closed_dim, rank_mismatch, non_shaped_type, unknown_mesh)


@settings(max_examples=200, deadline=None)
@given(shardings_with_free_axis(), st.sampled_from(MUTATIONS), st.data())
def test_one_broken_rule_is_rejected_with_its_message(case, mutation, data):
    mesh, sharding = case
    bad, type_, message = mutation(mesh, sharding, data)
    text = arg_module(mesh, bad, type_ if type_ is not None else _type_for(bad, data))
    assert first_error(text) == ARG + message, text


@SOME
@given(shardings_with_free_axis(), st.data())
def test_sharding_count_mismatch_rejected(case, data):
    mesh, sharding = case
    text = op_module(mesh, [sharding, sharding], _type_for(sharding, data))
    assert first_error(text) == ("'stablehlo.negate' op result shardings don't match number "
                                 "of values: 2 shardings vs 1 values"), text


@SOME
@given(st.integers(0, 7), st.integers(1, 4), st.data())
def test_maximal_mesh_with_dims_rejected(device, rank, data):
    mesh = Mesh((), (device,))
    text = arg_module(mesh, TensorSharding.fully_open("mesh", rank),
                      data.draw(ranked_tensor_types(rank)))
    assert first_error(text) == ARG + ("a maximal sharding can only have a sharding with "
                                       "rank 0 and no replicated or unreduced axes."), text


# --- DIMSH-2 can't be written as text (``p-1`` doesn't parse): checked through the API ---

@SOME
@given(shardings_with_free_axis(), st.data())
def test_negative_priority_rejected(case, data):
    mesh, sharding = case
    assume(sharding.rank)
    dim = data.draw(st.integers(0, sharding.rank - 1))
    dims = list(sharding.dim_shardings)
    dims[dim] = dataclasses.replace(dims[dim], axes=(), is_closed=False,
                                    priority=data.draw(st.integers(-9, -1)))
    bad = sharding.replace(dim_shardings=tuple(dims))
    with pytest.raises(VerifyError) as error:
        verify_tensor_sharding(bad, _type_for(bad, data), mesh, lambda m: VerifyError(None, m))
    assert error.value.message == f"dim {dim} has a negative priority"
