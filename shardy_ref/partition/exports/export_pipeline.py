"""``sdy-export-pipeline``: the passes that turn a propagated module into what the
partitioner and XLA expect (upstream
``shardy/dialect/sdy/transforms/export/export_pipeline.cc``; the passes are described at
https://openxla.org/shardy/sdy_export_passes).

Module dumps (``dump-directory``) are not written: the option parses, and the dumps are
debugging output only.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from shardy_ref.partition.device_counts import partition_count_option, replica_count_option
from shardy_ref.pass_manager import (
    PassPipeline,
    PipelineElement,
    make_pass,
    nested,
    passes,
    register_pass,
)


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """Upstream ``ExportOptions`` (the defaults are upstream's)."""

    replica_count: int = replica_count_option()
    partition_count: int = partition_count_option()
    dump_directory: str = field(default="", metadata={"help": (
        "Directory to dump intermediate MLIR modules; accepted, but nothing is dumped")})
    avoid_export_for_partitioning: bool = field(default=False, metadata={"help": (
        "Avoid exporting for partitioning, "
        "so the module can go through another propagation round")})
    enable_insert_explicit_collectives: bool = field(
        default=False, metadata={"help": "Enable inserting explicit collective ops during export"})
    remove_all_gather_reduce_scatter_for_cmv1: bool = field(
        default=False, metadata={"help": "Remove all-gather and reduce-scatter ops for CMV1"})
    enable_per_instruction_partitioning: bool = field(default=False, metadata={"help": (
        "Enable selective per-instruction partitioning and sdy.manual_computation wrapping")})
    per_instruction_partitioning_filter: str = field(default="", metadata={"help": (
        "Filter string for selective partitioning "
        "(e.g. 'dot, pad', 'selectLow=0, selectHigh=10')")})
    keep_sharding_rules: bool = field(
        default=False, metadata={"help": "Keep sdy.sharding_rule attrs"})
    dump_sharding_origins: bool = field(
        default=False, metadata={"help": "Sink sdy.sharding_origins attr"})
    dump_propagation_edges: bool = field(
        default=False, metadata={"help": "Sink sdy.propagation_edges attr"})
    avoid_reshards_on_calls: bool = field(
        default=False, metadata={"help": "Avoid inserting explicit reshards/collectives for calls"})
    update_non_divisible_input_output_shardings: bool = field(
        default=True, metadata={"help": "Update axes with non-divisible input/output shardings"})
    inline_meshes: bool = field(default=True, metadata={"help": "Inline meshes in shardings"})


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
