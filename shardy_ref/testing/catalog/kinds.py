"""The registry of op kinds (:data:`KINDS`) and the ops deliberately left out of the sweep
(:data:`NOT_SWEPT`, each with its reason). Importing this module imports every family
module, which registers its kinds with :func:`kind`."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_SHAPES = ((8, 6),)
# families whose ops move data between positions try the transposed shape too, so that
# the dimension they index, slice or split is also the one 4 and 8 do not divide
FAMILY_SHAPES = {"shape": ((8, 6), (6, 8)), "indexing": ((8, 6), (6, 8))}


@dataclass(frozen=True, slots=True)
class OpKind:
    """One way of using one or more ops: ``build(site, x, shape)`` emits it on the f32
    value ``x`` (see the package docstring). ``ops`` are the op names it exercises as
    written (CHLO before its legalization); ``shapes`` are the input shapes the sweep
    tries (rank 2 with a dimension 4 and 8 do not divide, by default)."""

    name: str
    family: str
    ops: tuple[str, ...]
    build: Callable
    shapes: tuple[tuple[int, ...], ...] = DEFAULT_SHAPES
    in_programs: bool = True  # drawn by random programs (not when propagation refuses it)


KINDS: dict[str, OpKind] = {}


def kind(name: str, *ops: str, shapes=DEFAULT_SHAPES, in_programs: bool = True):
    """Register the decorated builder as the kind ``name`` exercising ``ops`` (default: the
    op ``stablehlo.<name>``)."""
    def register(fn):
        if name in KINDS:
            raise ValueError(f"two op kinds named '{name}'")
        family = fn.__module__.rsplit(".", 1)[-1]
        if shapes is DEFAULT_SHAPES:
            shape_list = FAMILY_SHAPES.get(family, DEFAULT_SHAPES)
        else:
            shape_list = tuple(shapes)
        KINDS[name] = OpKind(name, family, ops or (f"stablehlo.{name}",), fn, shape_list,
                             in_programs)
        return fn
    return register


# Ops the interpreter runs that the sweep does not build as a global op of a sharded
# program, and why.
NOT_SWEPT: dict[str, str] = {
    **dict.fromkeys(
        ("check.expect_almost_eq", "check.expect_almost_eq_const", "check.expect_close",
         "check.expect_eq", "check.expect_eq_const", "check.expect_serialized_eq",
         "interpreter.print", "interpreter.probe", "interpreter.run_parallel"),
        "a test-harness op of stablehlo-translate, not part of a program to partition"),
    "stablehlo.replica_id": "names the replica running it, and partitioned programs have "
    "one replica (stablehlo.partition_id is swept inside sdy.manual_computation)",
    **dict.fromkeys(
        ("stablehlo.infeed", "stablehlo.outfeed", "stablehlo.send", "stablehlo.recv"),
        "host I/O: the simulator has no host to read from or write to"),
    **dict.fromkeys(
        ("sdy.data_flow_edge", "sdy.func_data_flow_edge"),
        "created and removed by sdy-propagation-pipeline itself, never in its input"),
    "chlo._asin_acos_kernel": "an internal op of CHLO's asin/acos decompositions",
    "stablehlo.set_dimension_size": "gives a bounded dynamic shape; the simulator cuts "
    "only static shapes into shards (it refuses the program with a located error)",
    "sdy.named_computation": "real Shardy's sdy-propagation-pipeline rejects it in its input "
    "('sdy.data_flow_edge' op expected input ... not be defined by an SdyDialect op), as we "
    "do; programs get it from func.call during propagation, swept as the kind 'call'",
}

FAMILIES = ("elementwise", "chlo", "shape", "indexing", "reductions", "linalg", "control",
            "sdy_ops")


def _load() -> None:
    for family in FAMILIES:
        importlib.import_module(f"shardy_ref.testing.catalog.{family}")


def kinds_covering(op_name: str) -> list[OpKind]:
    """The kinds that exercise ``op_name``."""
    return [k for k in KINDS.values() if op_name in k.ops]


_load()
