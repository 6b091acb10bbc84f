"""``chlo-pre-serialization-pipeline``: StableHLO's "lower as much as possible to StableHLO,
including CHLO, Shape dialect, and index types" (``createChloPreSerializationPipeline`` in
``stablehlo/transforms/PassPipelines.cpp`` at the pinned commit 3c9301c116f9), which
StableHLO's and JAX's interpret tests run before ``stablehlo-translate --interpret``.

Upstream runs ``chlo-legalize-to-stablehlo``, ``shape-legalize-to-stablehlo`` and
``reconcile-unrealized-casts``. The last two rewrite ``shape``-dialect ops, index-typed
scalar computations and ``builtin.unrealized_conversion_cast`` chains, which shardy_ref
does not model: on IR without them both change nothing, and :class:`ShapeLegalizeToStablehlo`
refuses IR with them (a located error rather than a program left half lowered).
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.types import IndexType
from shardy_ref.pass_manager import (
    Pass,
    PassPipeline,
    PipelineElement,
    nested,
    register_pass,
)


def _needs_shape_lowering(op) -> bool:
    if op.dialect == "shape" or op.name == "builtin.unrealized_conversion_cast":
        return True
    types = [v.type for v in op.operands] + [r.type for r in op.results]
    return any(isinstance(getattr(t, "element_type", t), IndexType) for t in types)


@register_pass
@dataclass(frozen=True, slots=True)
class ShapeLegalizeToStablehlo(Pass):
    """Legalize shape-related ops to StableHLO: here, refuse any (see the module
    docstring); IR without them is already legal."""

    NAME = "shape-legalize-to-stablehlo"
    ANCHOR = "func.func"  # upstream: Pass<"shape-legalize-to-stablehlo", "func::FuncOp">

    def run(self, op, ctx) -> None:
        for nested_op in op.walk():
            if nested_op is not op and _needs_shape_lowering(nested_op):
                raise PassError(nested_op.location,
                                f"shardy_ref cannot legalize '{nested_op.name}' to StableHLO: "
                                "shape-dialect ops, index computations and unrealized "
                                "casts are not supported")


@register_pass
@dataclass(frozen=True, slots=True)
class ChloPreSerializationPipeline(PassPipeline):
    """Lower as much as possible to StableHLO, including CHLO, Shape dialect, and index
    types."""

    NAME = "chlo-pre-serialization-pipeline"

    def elements(self) -> list[PipelineElement]:
        return [nested("func.func", "chlo-legalize-to-stablehlo",
                       "shape-legalize-to-stablehlo")]
