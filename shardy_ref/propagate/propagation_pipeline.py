"""``sdy-propagation-pipeline``: import, user-priority propagation, export (upstream
``shardy/dialect/sdy/transforms/propagation/propagation_pipeline.cc``).

As upstream's registration does, the pipeline runs with ``inline-meshes=false`` and every
other propagation option at its default; ``dedup-functions-fully`` chooses between keeping
function calls (func data-flow edges) and flattening the call graph.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from shardy_ref.pass_manager import (
    PassPipeline,
    PipelineElement,
    make_pass,
    nested,
    passes,
    register_pass,
)


@register_pass
@dataclass(frozen=True, slots=True)
class PropagationPipeline(PassPipeline):
    """Runs the SDY propagation pass, preceded by a sequence of import passes needed as a
    pre-processing step for propagation (and followed by the export passes)."""

    NAME = "sdy-propagation-pipeline"
    dedup_functions_fully: bool = field(default=False, metadata={"help": (
        "Whether to dedup functions fully "
        "(func data-flow edges instead of a flattened call graph)")})

    def elements(self) -> list[PipelineElement]:
        dedup = self.dedup_functions_fully
        pipeline = passes(("sdy-import-pipeline",
                           f"dedup-functions-fully={str(dedup).lower()}"))
        if dedup:
            pipeline += passes("sdy-add-func-data-flow-edges")
        else:
            pipeline += passes("sdy-flatten-call-graph", "symbol-dce", "sdy-import-func-calls",
                               "symbol-dce", "sdy-apply-sharding-constraints",
                               "sdy-sharding-group-import")
        pipeline += passes("sdy-pre-order-funcs",
                           ("sdy-user-priority-propagate", "keep-sharding-rules=true"))
        if dedup:
            pipeline += passes("sdy-propagate-to-func-results")
            pipeline.append(nested("func.func", "sdy-sink-func-data-flow-edges"))
        else:
            pipeline += passes("sdy-export-named-computations", "sdy-propagate-to-func-results")
        pipeline += passes("sdy-unflatten-call-graph", "symbol-dce",
                           "sdy-insert-func-call-reshards")
        # the export passes through the registry: propagation never imports a later stage
        export = dataclasses.replace(make_pass("sdy-export-pipeline"),
                                     avoid_reshards_on_calls=dedup, inline_meshes=False)
        return pipeline + export.elements()
