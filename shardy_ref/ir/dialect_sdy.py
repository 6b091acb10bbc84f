"""Ops of the sdy dialect (collectives declare no memory effects upstream, so they are
not "pure": unused ones are kept): inherent attributes and traits from upstream ``ir/ops.td``
(https://openxla.org/shardy/sdy_dialect#operations). Their text syntax lives in
``shardy_ref.parser``."""
from shardy_ref.ir.opdefs import register

register("sdy.mesh", "Symbol", inherent=("mesh", "sym_name"))
register("sdy.sharding_constraint", inherent=("sharding",))
register("sdy.reshard", "Pure", inherent=("sharding",))
register("sdy.return", "Pure Terminator")
register("sdy.manual_computation", "IsolatedFromAbove RecursiveMemoryEffects",
         inherent=("in_shardings", "manual_axes", "out_shardings"))
register("sdy.sharding_group", inherent=("group_id",))
register("sdy.constant", "Pure", inherent=("value",))
register("sdy.data_flow_edge", inherent=("sharding",))
register("sdy.propagation_barrier", "Pure", inherent=("allowed_direction",))
register("sdy.named_computation", "IsolatedFromAbove RecursiveMemoryEffects",
         inherent=("in_shardings", "name", "out_shardings"))
register("sdy.all_gather", inherent=("gathering_axes", "out_sharding"))
register("sdy.all_slice", inherent=("out_sharding", "slicing_axes"))
register("sdy.all_to_all", inherent=("out_sharding", "params"))
register("sdy.collective_permute", inherent=("out_sharding",))
register("sdy.all_reduce", inherent=("out_sharding", "reduction_axes", "reduction_op"))
register("sdy.reduce_scatter", inherent=("out_sharding", "reduce_scatter_axes", "reduction_op"))
register("sdy.sharded_to_unreduced", inherent=("axes", "out_sharding"))
register("sdy.replicated_to_unreduced", inherent=("axes", "out_sharding"))
register("sdy.func_data_flow_edge")
