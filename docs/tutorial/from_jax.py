"""The tutorial's JAX example: a PartitionSpec per argument, a with_sharding_constraint and
an unconstrained dimension in it, lowered by JAX and printed as sdy (``shardy_ref.frontends``)."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from shardy_ref.backends import xla_devices
from shardy_ref.frontends import from_jax

mesh = Mesh(np.array(xla_devices(8)).reshape(2, 4), ("data", "model"))


def layer(x, w):
    h = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", P.UNCONSTRAINED)))
    return jax.nn.relu(h)


x = np.zeros((16, 32), np.float32)
w = np.zeros((32, 64), np.float32)
module = from_jax(layer, x, w, mesh=mesh,
                  in_shardings=(P("data", None), P(None, "model")))
print(module)
