"""Propagation: upstream's ``shardy/dialect/sdy/transforms/{import,propagation}``
(https://github.com/openxla/shardy/tree/a0277a83e7f8/shardy/dialect/sdy/transforms).

- :mod:`~shardy_ref.propagate.import_`: the import passes, one module per upstream
  ``transforms/import/*.cc`` (``import`` is a Python keyword, hence the underscore).
- the modules here: ``transforms/propagation/*.cc`` under the same names
  (``basic_propagation``, ``aggressive_propagation``, ``op_priority_propagation``,
  ``user_priority_propagation``: each strategy's ``*PassImpl``, registered in ``passes``
  as upstream's ``passes.td`` declares them; ``basic_factor_propagation``,
  ``aggressive_factor_propagation``, ``sharding_projection``, ``sharding_group_map``,
  ``propagation_pipeline``, ``utils``); ``data_flow`` and ``provenance`` are ours (which
  edges a value's sharding came through, for ``shardy-ref explain``).
- :mod:`~shardy_ref.propagate.rules`: ``op_sharding_rule_registry.cc`` split by op family,
  with ``op_sharding_rule_builder.cc`` (``rules.builder``) and
  ``populate_op_sharding_rules.cc`` (``rules.populate``).
- :mod:`~shardy_ref.propagate.debugging`: ``propagation/debugging/source_sharding.cc``.

May import ``ir``, ``parser``, ``pass_manager`` and ``transforms``; never ``partition`` or
above. A pass module never imports another pass module; shared helpers live in
``ir.utils``, ``transforms.common`` or ``propagate.utils``.
"""
