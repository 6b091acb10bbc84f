"""``sdy-import-pipeline``: the import passes in the order propagation needs them
(upstream ``shardy/dialect/sdy/transforms/import/import_pipeline.cc``).

The passes are described at https://openxla.org/shardy/sdy_import_passes. Since mid-2025
upstream added ``sdy-propagate-sharding-from-func-to-call`` and a second ``symbol-dce``
(after the splitter, which may leave functions unused), and runs apply-sharding-constraints
and sharding-group-import here only when functions are deduplicated fully (otherwise the
propagation pipeline runs them after importing calls).
``sdy-explicit-gather-scatter-batching`` is off by default upstream and not an option of
this pipeline; the "before_propagation" module dump needs a dump directory, which this
pipeline has no option for either.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.pass_manager import PassPipeline, PipelineElement, passes, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class ImportPipeline(PassPipeline):
    NAME = "sdy-import-pipeline"
    dedup_functions_fully: bool = field(default=False, metadata={"help": (
        "Whether to dedup functions fully (also applies sharding constraints and groups)")})

    def elements(self) -> list[PipelineElement]:
        pipeline = passes(
            "symbol-dce",
            "sdy-lift-inlined-meshes",
            "sdy-remove-size-one-axes",
            "sdy-propagate-sharding-from-func-to-call",
            "sdy-constant-or-scalar-splitter",
            "symbol-dce",
            "sdy-manual-axes-cleanup",
            "sdy-add-data-flow-edges",
        )
        if self.dedup_functions_fully:
            pipeline += passes("sdy-apply-sharding-constraints", "sdy-sharding-group-import")
        return pipeline
