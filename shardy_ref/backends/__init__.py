"""Runtimes beyond our NumPy simulator: :func:`run_on_xla` hands our per-device program to
XLA (through jax, the optional ``jax`` extra) and runs it on real devices (CPU host devices,
GPUs, TPUs). ``import shardy_ref.backends`` does not import jax; its functions do, and say
which extra to install when it is absent."""
from __future__ import annotations

from shardy_ref.backends.jax_runtime import (
    BackendError,
    MissingExtraError,
    join_processes,
    xla_devices,
)
from shardy_ref.backends.xla import XlaProgram, compile_on_xla, run_on_xla

__all__ = ["BackendError", "MissingExtraError", "XlaProgram", "compile_on_xla",
           "join_processes", "run_on_xla", "xla_devices"]
