"""``sdy-ref-per-device-pipeline``: one flag from a propagated module to the per-device
StableHLO program every device runs (our own pipeline; upstream has no named one).

The input is a module whose values carry their final shardings, e.g. the output of
``sdy-propagation-pipeline`` (or ``sdy-export-pipeline`` without explicit collectives).
The passes are those upstream's executable partitioner tests chain on the command line
(``export/test/executable_partitioner_pipeline/run_sdy_interpreter_test.sh``), in that
order, after erasing propagation barriers (XLA's export lowers them to their operand):
insert explicit reshards (full version), resolve permutation factors, reshard around the
ops those passes cannot make correct per device (our ``sdy-ref-make-partitionable``), lower
reshards to collectives, pad non-divisible dimensions, resolve single-device shardings, convert
global shapes to local ones, and drop the shardings and meshes. The result has local types,
StableHLO collectives over device ids and no sdy ops left; run it with
``interpreter.run_parallel`` (``shardy_ref.execute.spmd``) on ``replica-count *
partition-count`` processes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.pass_manager import PassPipeline, PipelineElement, passes, register_pass


def per_device_passes(enable_halo_exchange: bool = True, replica_count: int = 1,
                      partition_count: int = 1) -> list[tuple[str, str]]:
    """The pipeline's passes as ``(name, options)``, each with the options the executable
    tests give it."""
    counts = f"replica-count={replica_count} partition-count={partition_count}"
    halo = f"enable-halo-exchange={str(enable_halo_exchange).lower()}"
    return [
        ("sdy-ref-erase-propagation-barriers", ""),
        ("sdy-insert-explicit-reshards", "enable-full-version=true"),
        ("sdy-resolve-permutation-factors", f"{halo} {counts}"),
        ("sdy-ref-make-partitionable", ""),
        ("sdy-reshard-to-collectives", ""),
        ("sdy-pad-for-divisibility", ""),
        ("sdy-resolve-single-device-sharding", counts),
        ("sdy-convert-global-to-local", counts),
        ("sdy-drop-sharding-and-mesh", ""),
    ]


@register_pass
@dataclass(frozen=True, slots=True)
class PerDevicePipeline(PassPipeline):
    """Partition a propagated module into the per-device program (see the module
    docstring). Options as upstream's partitioner passes spell them."""

    NAME = "sdy-ref-per-device-pipeline"
    enable_halo_exchange: bool = field(default=True, metadata={"help": (
        "Resolve permutation factors by halo exchange where possible (else by replication)")})
    replica_count: int = field(
        default=1, metadata={"help": "Number of replicas (data parallelism) the program runs on"})
    partition_count: int = field(default=1, metadata={"help": (
        "Number of partitions (model parallelism) the program runs on")})

    def elements(self) -> list[PipelineElement]:
        return passes(*per_device_passes(self.enable_halo_exchange, self.replica_count,
                                          self.partition_count))
