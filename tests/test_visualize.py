"""Issue 28: ``shardy_ref.visualize`` / ``shardy_ref.show`` draw a jax.Array, a NamedSharding
with a shape, or an sdy sharding, as ``shardy-ref show`` draws values."""
from __future__ import annotations

import io

import pytest

import shardy_ref

pytest.importorskip("rich")


def _drawn(*args, **kwargs) -> str:
    out = io.StringIO()
    shardy_ref.visualize(*args, file=out, width=100, **kwargs)
    return out.getvalue()


def test_an_sdy_sharding_with_a_sub_axis():
    text = _drawn('#sdy.sharding<@mesh, [{"x"}, {"y":(1)2}]>', shape=(8, 4),
                  mesh='<["x"=2, "y"=4]>')
    assert 'dim 1: 4 over "y":(1)2 (2) -> 2 blocks of 2' in text
    assert "dev 6, 7" in text and shardy_ref.show is shardy_ref.visualize


def test_bad_arguments_say_what_is_needed():
    with pytest.raises(ValueError, match="shape= and mesh="):
        shardy_ref.visualize('#sdy.sharding<@mesh, [{"x"}]>')
    with pytest.raises(TypeError, match="cannot draw a int"):
        shardy_ref.visualize(3)


def test_jax_named_sharding_and_array():
    jax = pytest.importorskip("jax")
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    from shardy_ref.backends import xla_devices

    devices = np.array(xla_devices(8)).reshape(2, 4)
    mesh = Mesh(devices, ("x", "y"))
    named = NamedSharding(mesh, P(None, ("x", "y")))
    text = _drawn(named, shape=(4, 16))
    assert '#sdy.sharding<@mesh, [{}, {"x", "y"}]>' in text
    assert "dim 1: 16 over" in text
    array = jax.device_put(np.zeros((4, 16), np.float32), named)
    assert _drawn(array) == text
