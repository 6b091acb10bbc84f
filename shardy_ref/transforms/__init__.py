"""Passes below the sharding passes.

- the modules here: generic MLIR and StableHLO passes that upstream's tests run next to sdy
  passes (``symbol-dce``, ``cse``, ``inline``, ``canonicalize``,
  ``chlo-legalize-to-stablehlo``, ``chlo-pre-serialization-pipeline``,
  ``stablehlo-legalize-composite-to-call``).
- :mod:`~shardy_ref.transforms.common`: upstream's ``shardy/dialect/sdy/transforms/common``
  (op properties, propagation options, ``sdy-inline-meshes``), which import, propagation
  and export passes all use.

May import ``ir``, ``parser`` and ``pass_manager``; never ``propagate`` or above.
"""
