"""Programs from other frameworks into our IR: :func:`from_jax` lowers a JAX function
with its shardings to StableHLO + sdy and parses it (jax is the optional ``jax`` extra;
``import shardy_ref.frontends`` does not import it)."""
from __future__ import annotations

from shardy_ref.frontends.jax import from_jax, lower_to_text

__all__ = ["from_jax", "lower_to_text"]
