"""``sdy-export-pipeline``: the passes that turn a propagated module into what the
partitioner and XLA expect (upstream
``shardy/dialect/sdy/transforms/export/export_pipeline.cc``; the passes are described at
https://openxla.org/shardy/sdy_export_passes).

Module dumps (``dump-directory``) are not written: the option parses, and the dumps are
debugging output only.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from shardy_ref.pass_manager import (
    PassPipeline,
    PipelineElement,
    make_pass,
    nested,
    passes,
    register_pass,
)
from shardy_ref.transforms.common.propagation_options import ExportOptions


def export_pipeline(options) -> list[PipelineElement]:
    """Upstream ``addExportPipeline`` for ``options`` (anything with ExportOptions' fields)."""
    origins, edges = (str(options.dump_sharding_origins).lower(),
                      str(options.dump_propagation_edges).lower())
    sink = f"sink-debug-sharding-origins={origins} sink-debug-propagation-edge-sharding={edges}"
    pipeline = [nested("func.func", "sdy-constant-or-scalar-merger",
                       ("sdy-sink-data-flow-edges", sink))]
    if not options.avoid_export_for_partitioning:
        pipeline += passes("sdy-remove-sharding-groups")
        pipeline.append(nested("func.func", "sdy-sharding-constraint-to-reshard"))
    if options.update_non_divisible_input_output_shardings:
        pipeline += passes("sdy-update-non-divisible-input-output-shardings",
                           "sdy-remove-sub-axes-in-input-output-shardings")
    pipeline += passes("sdy-close-shardings")
    if not options.avoid_export_for_partitioning:
        full = options.enable_insert_explicit_collectives
        per_instruction = options.enable_per_instruction_partitioning
        pipeline.append(nested(
            "func.func", "sdy-verify-unreduced-axes",
            ("sdy-insert-explicit-reshards",
             f"enable-full-version={str(full or per_instruction).lower()}")))
        if per_instruction:
            pipeline.append(PipelineElement(pass_=dataclasses.replace(
                make_pass("sdy-per-instruction-partitioning"),
                filter=options.per_instruction_partitioning_filter,
                replica_count=options.replica_count, partition_count=options.partition_count)))
        elif full:
            pipeline += passes(("canonicalize", "enable-patterns=sdy-reshard"))
            pipeline.append(nested("func.func", "sdy-reshard-to-collectives"))
        pipeline += passes(("canonicalize", "enable-patterns=sdy-collective"))
        if full and options.remove_all_gather_reduce_scatter_for_cmv1:
            pipeline.append(nested("func.func",
                                   "sdy-remove-all-gather-reduce-scatter-for-cmv1"))
    if options.dump_propagation_edges or options.dump_sharding_origins:
        pipeline += passes("sdy-remove-propagation-debug-info")
    if not options.keep_sharding_rules:
        pipeline.append(nested("func.func", "sdy-drop-sharding-rules"))
    if not options.avoid_export_for_partitioning and options.inline_meshes:
        pipeline += passes("sdy-inline-meshes")
    return pipeline


@register_pass
@dataclass(frozen=True, slots=True)
class ExportPipeline(PassPipeline, ExportOptions):
    """Run a sequence of export passes needed as a post-processing step for Shardy
    propagation."""

    NAME = "sdy-export-pipeline"  # its options are ExportOptions' fields

    def elements(self) -> list[PipelineElement]:
        return export_pipeline(self)
