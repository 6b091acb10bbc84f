"""Fuzzing Shardy, for us and for any other implementation: hypothesis strategies that draw
valid meshes, shardings, sharding rules and whole sharded StableHLO programs
(:mod:`shardy_ref.testing.strategies`), and the invariants a sharding compiler must keep
(:mod:`shardy_ref.testing.invariants`). Needs ``hypothesis`` (``pip install
'shardy-ref[testing]'``)."""
