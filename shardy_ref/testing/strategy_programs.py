"""Strategies over whole modules for :mod:`shardy_ref.testing.strategies`: printed module
text and NumPy inputs for a module's ``@main``."""
from __future__ import annotations

from hypothesis import strategies as st

from shardy_ref.testing.programs import programs


def _print(text: str) -> str:
    from shardy_ref.parser import parse_module, print_module

    return print_module(parse_module(text, "<program>"))


def mlir_text(**knobs) -> st.SearchStrategy[str]:
    """The text of a :func:`programs` module (same ``knobs``) as our printer prints it:
    the canonical form, which parses and prints back to itself."""
    return programs(**knobs).map(_print)


def _main_inputs(module):
    from shardy_ref.ir.func_attrs import function_type
    from shardy_ref.ir.module import Module

    main = Module(module).lookup("main")
    if main is None or main.name != "func.func":
        raise ValueError("the module has no @main")
    return function_type(main).inputs


def inputs_for(module_or_text, *, seed: int) -> list:
    """NumPy arrays for ``@main``'s arguments (shapes and element types from its signature):
    floats uniform in [-1, 1], integers in [-3, 3] ([0, 3] unsigned), booleans at random,
    complex numbers with both parts in [-1, 1]. The same seed gives the same arrays."""
    import numpy as np

    from shardy_ref.ir.dtypes import numpy_dtype
    from shardy_ref.parser import parse_module

    module = parse_module(module_or_text, "<inputs>") if isinstance(module_or_text, str) \
        else module_or_text
    rng = np.random.default_rng(seed)
    out = []
    for t in _main_inputs(module):
        shape = tuple(getattr(t, "shape", ()))
        if any(d is None for d in shape):
            raise ValueError(f"@main has an argument of dynamic shape: {t}")
        dtype = numpy_dtype(str(getattr(t, "element_type", t)))
        out.append(_random_array(rng, shape, dtype))
    return out


def _random_array(rng, shape, dtype):
    import numpy as np

    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        low = 0 if np.issubdtype(dtype, np.unsignedinteger) else -3
        return rng.integers(low, 4, shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)
    return rng.uniform(-1, 1, shape).astype(dtype)


def inputs(module_or_text) -> st.SearchStrategy[list]:
    """:func:`inputs_for` ``module_or_text`` with a drawn seed."""
    return st.integers(0, 2**32 - 1).map(lambda seed: inputs_for(module_or_text, seed=seed))
