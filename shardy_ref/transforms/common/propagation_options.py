"""Upstream ``ExportOptions`` (``transforms/common/propagation_options.h``): the options of
``sdy-export-pipeline``, which ``sdy-propagation-pipeline`` takes too, declared once."""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.transforms.common.device_counts import partition_count_option, replica_count_option


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
