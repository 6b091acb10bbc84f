"""Properties of the mesh verifier (spec 003 §2.9, §3.11, §3.12; ``verify_mesh`` in
shardy_ref/ir/verify/sharding.py), and the size-0 dimension rule upstream dropped (TSH-7).

Random valid meshes verify both as ``sdy.mesh`` and inlined in a sharding. A mutation
that breaks one MeshAttr rule is rejected with upstream's message: first by the parser
(``custom op 'sdy.mesh'`` in front on ``sdy.mesh``, bare when inlined, as sdy_opt reports
it), and by the verifier when the mesh was built in memory. The tensor-sharding
properties are in ``test_verify_sharding_props.py``.
"""
from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shardy_ref.ir import VerifyError
from shardy_ref.ir.sdy_axes import Mesh, MeshAxis
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.verify import collect_errors
from shardy_ref.ir.verify.sharding import verify_mesh
from shardy_ref.parser import parse_module
from shardy_ref.testing.strategies import meshes
from shardy_ref.tools.opt import Chunk, Options, process_chunk

SOME = settings(max_examples=60, deadline=None)


def errors(text: str) -> list[str]:
    out, diagnostics = process_chunk(Chunk(text, 1), Options(), "t.mlir")
    found = [d.message for d in diagnostics if d.severity == "error"]
    assert (out is None) == bool(found), text
    return found


def mesh_op(mesh: Mesh) -> str:
    return f"sdy.mesh @mesh = {mesh.params()}\n"


def inline(mesh: Mesh) -> str:
    """A function argument whose sharding has ``mesh`` inline (rank 0 if maximal)."""
    sharding = TensorSharding.fully_open(mesh, 0 if mesh.is_maximal else 2)
    return (f"func.func @f(%arg0: tensor<8x8xf32> {{sdy.sharding = {sharding}}}) -> "
            "tensor<8x8xf32> {\n  return %arg0 : tensor<8x8xf32>\n}\n")


@SOME
@given(meshes())
def test_valid_mesh_verifies(mesh):
    assert errors(mesh_op(mesh)) == []
    assert errors(inline(mesh)) == []


# --- single mutations, each breaking one rule: (mesh, data) -> (bad mesh, message) ---------

def zero_axis_size(mesh, data):
    axes = list(mesh.axes) or [MeshAxis("a", 2)]
    i = data.draw(st.integers(0, len(axes) - 1))
    size = data.draw(st.integers(-3, 0))
    axes[i] = MeshAxis(axes[i].name, size)
    return Mesh(tuple(axes)), f"axis size must be at least 1, got: {size}"


def negative_device_id(mesh, data):
    ids = list(mesh.device_ids) or [0]
    i = data.draw(st.integers(0, len(ids) - 1))
    ids[i] = data.draw(st.integers(-9, -1))
    axes = mesh.axes if mesh.device_ids else ()
    return Mesh(axes, tuple(ids)), f"device id must be non-negative, got: {ids[i]}"


def many_ids_without_axes(mesh, data):
    ids = tuple(data.draw(st.permutations(range(data.draw(st.integers(2, 5))))))
    return Mesh((), ids), "axes is empty and device_ids has more than one element"


def duplicate_axis_name(mesh, data):
    axes = list(mesh.axes) or [MeshAxis("a", 2)]
    copy = data.draw(st.sampled_from(axes))
    axes.insert(data.draw(st.integers(0, len(axes))), MeshAxis(copy.name, 2))
    return Mesh(tuple(axes)), f'duplicate axis name: "{copy.name}"'


def device_count_mismatch(mesh, data):
    axes = mesh.axes or (MeshAxis("a", 2),)
    total = Mesh(axes).total_size
    count = data.draw(st.integers(1, 9).filter(lambda n: n != total))
    return (Mesh(axes, tuple(range(count))[::-1]),
            "total product of axis sizes must match total number of device ids, got: "
            f"{total} != {count}")


def ids_not_a_permutation(mesh, data):
    axes = mesh.axes or (MeshAxis("a", 2),)
    total = Mesh(axes).total_size
    assume(1 < total <= 64)
    ids = data.draw(st.lists(st.integers(0, 2 * total), min_size=total, max_size=total))
    assume(sorted(ids) != list(range(total)))
    shown = ", ".join(map(str, sorted(ids)))
    return Mesh(axes, tuple(ids)), f"sorted device ids must be iota(product(axes)), got: {shown}"


MUTATIONS = (zero_axis_size, negative_device_id, many_ids_without_axes, duplicate_axis_name,
             device_count_mismatch, ids_not_a_permutation)


@settings(max_examples=150, deadline=None)
@given(meshes(), st.sampled_from(MUTATIONS), st.data())
def test_one_broken_mesh_rule_is_rejected_with_its_message(mesh, mutation, data):
    bad, message = mutation(mesh, data)
    with pytest.raises(VerifyError) as error:
        verify_mesh(bad, lambda m: VerifyError(None, m))
    assert error.value.message == message
    assert errors(mesh_op(bad))[0] == f"custom op 'sdy.mesh' {message}"
    assert errors(inline(bad))[0] == message
    module = parse_module(mesh_op(Mesh()))  # a bad mesh that did not come from text
    next(op for op in module.walk() if op.name == "sdy.mesh").attributes["mesh"] = bad
    assert [e.message for e in collect_errors(module)] == [f"custom op 'sdy.mesh' {message}"]


# --- TSH-7: upstream's docs forbid sharding a dim of size 0, its verifier allows it ----------

def test_size_zero_dim_may_be_sharded():
    """Upstream removed the check in commit 4a8fbeed; propagation_pipeline.mlir's
    ``size_zero_dim_sharded`` relies on it."""
    text = ('sdy.mesh @mesh = <["a"=2, "b"=2]>\n'
            'func.func @f(%arg0: tensor<8x0xf32> {sdy.sharding = #sdy.sharding<@mesh, '
            '[{}, {"a"}]>}) -> tensor<8x0xf32> {\n  return %arg0 : tensor<8x0xf32>\n}\n')
    assert errors(text) == []
