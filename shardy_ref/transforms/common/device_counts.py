"""The ``replica-count`` and ``partition-count`` options several partitioner passes take
(upstream's export passes spell them so), declared once with their help text."""
from __future__ import annotations

from dataclasses import field


def replica_count_option():
    return field(default=1, metadata={"help": "Number of replicas (data parallelism)"})


def partition_count_option():
    return field(default=1, metadata={"help": "Number of partitions (model parallelism)"})
