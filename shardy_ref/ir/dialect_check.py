"""Ops of the dialects StableHLO's interpreter tests use: ``check`` (``stablehlo/tests/
CheckOps.td``: expectations on values) and ``interpreter`` (``stablehlo/reference/
InterpreterOps.td``: ``run_parallel`` over a process grid, ``print``, ``probe``)."""
from shardy_ref.ir.opdefs import register

register("check.expect_eq")
register("check.expect_eq_const", inherent=("value",))
register("check.expect_almost_eq", inherent=("tolerance",))
register("check.expect_almost_eq_const", inherent=("tolerance", "value"))
register("check.expect_close", inherent=("max_ulp_difference", "min_ulp_difference"))
register("check.expect_serialized_eq", inherent=("iteration", "probe_id"))
register("interpreter.run_parallel", inherent=("infeed", "programs"))
register("interpreter.print")
register("interpreter.probe", inherent=("probe_id",))
