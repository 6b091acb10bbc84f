"""Partitioning: upstream's ``shardy/dialect/sdy/transforms/export``
(https://github.com/openxla/shardy/tree/a0277a83e7f8/shardy/dialect/sdy/transforms/export)
and this project's per-device lowering after it.

- :mod:`~shardy_ref.partition.export`: every upstream export pass, one module (or package,
  for a pass split over several files) per ``transforms/export/*.cc``, under the same name.
- the modules here: ours. ``per_device_pipeline`` (``sdy-ref-per-device-pipeline``: the
  export passes, then collectives, then the global-to-local conversion),
  ``make_partitionable``, ``erase_propagation_barriers`` and ``collective_cost`` (the cost
  model ``shardy-ref explain`` reports).

May import ``ir``, ``parser``, ``pass_manager``, ``transforms`` and ``propagate``'s
analyses (sharding rules, projections); never a pass module of ``propagate``.
"""
