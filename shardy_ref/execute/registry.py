"""The kernel table: op name -> the function that runs it (xDSL's ``@impl``, JAX's
per-primitive batching rules).

A kernel is ``fn(ctx, op, *operands) -> value | list[value] | None``: ``ctx`` is the
:class:`~shardy_ref.execute.context.Context` (batch shape, process grid, regions), ``op``
the IR operation (attributes, result types), ``operands`` its run-time values. It returns
one value for a one-result op, a list for several, ``None`` for none. Kernels that cannot
work on varying values directly wrap themselves in :func:`per_process`.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping

import numpy as np

KERNELS: dict[str, Callable] = {}


def kernel(*names: str):
    """Register the decorated function as the kernel of each op name."""
    def register(fn):
        for name in names:
            if name in KERNELS:
                raise ValueError(f"two kernels for '{name}'")
            KERNELS[name] = fn
        return fn
    return register


@functools.cache
def load_kernels() -> Mapping[str, Callable]:
    """The kernel table, loaded by need: a kernel module (one per op family; importing it
    registers its kernels) is imported when one of its ops is first looked up, by the
    generated :data:`~shardy_ref.execute.kernel_index.KERNEL_MODULES`, so a program pays
    only for the families it uses. Iterating the table imports every module."""
    return LazyKernels()


class LazyKernels(Mapping):
    """:data:`KERNELS` as a read-only mapping that imports a kernel's module on lookup."""

    def __getitem__(self, name: str) -> Callable:
        fn = KERNELS.get(name)
        if fn is None:
            from shardy_ref.execute.kernel_index import KERNEL_MODULES

            module = KERNEL_MODULES.get(name)
            if module is None:
                raise KeyError(name)
            importlib.import_module(f"shardy_ref.execute.kernels.{module}")
            fn = KERNELS[name]
        return fn

    def __contains__(self, name) -> bool:
        from shardy_ref.execute.kernel_index import KERNEL_MODULES

        return name in KERNELS or name in KERNEL_MODULES

    def __iter__(self) -> Iterator[str]:
        load_all()
        return iter(KERNELS)

    def __len__(self) -> int:
        load_all()
        return len(KERNELS)


def load_all() -> dict[str, Callable]:
    """Import every module of :mod:`shardy_ref.execute.kernels`; returns :data:`KERNELS`."""
    from shardy_ref.execute import kernels

    for info in pkgutil.iter_modules(kernels.__path__):
        importlib.import_module(f"{kernels.__name__}.{info.name}")
    return KERNELS


def kernel_index() -> dict[str, str]:
    """Op name -> the kernel module whose import registers it, as found by importing them
    all in order (in a fresh process: what :mod:`shardy_ref.execute.kernel_index` holds;
    ``python -m shardy_ref.execute.kernel_index`` writes it)."""
    from shardy_ref.execute import kernels

    index = {name: fn.__module__.rsplit(".", 1)[1] for name, fn in KERNELS.items()}
    for info in pkgutil.iter_modules(kernels.__path__):
        importlib.import_module(f"{kernels.__name__}.{info.name}")
        for name in KERNELS:
            index.setdefault(name, info.name)
    return index


def per_process(fn):
    """Run ``fn`` once per process (batch element) when an operand is varying, and stack the
    results: the batching fallback of kernels written for one process only (like a
    ``jax.vmap`` rule that loops). With uniform operands it runs once."""
    @functools.wraps(fn)
    def wrapper(ctx, op, *operands):
        if not any(getattr(v, "varying", False) for v in operands) or not ctx.batch_shape:
            return fn(ctx, op, *operands)
        per_index = []
        for index in np.ndindex(*ctx.batch_shape):
            out = fn(ctx.unbatched(index), op, *(v.at(index) for v in operands))
            per_index.append(out)
        return _stack_results(ctx, per_index)
    return wrapper


def _stack_results(ctx, per_index: list):
    from shardy_ref.execute.values import Tensor, Token, TupleValue

    first = per_index[0]
    if first is None:
        return None
    if isinstance(first, (list, tuple)) and not isinstance(first, TupleValue):
        return [_stack_results(ctx, [out[i] for out in per_index]) for i in range(len(first))]
    if isinstance(first, Token):
        return first
    if isinstance(first, TupleValue):
        return TupleValue(tuple(
            _stack_results(ctx, [out.elements[i] for out in per_index])
            for i in range(len(first.elements))))
    # Tensors may refine a dynamic result type per process; all must agree.
    data = np.stack([out.data for out in per_index]).reshape(
        (*ctx.batch_shape, *first.data.shape))
    return Tensor(first.type, data, len(ctx.batch_shape))

