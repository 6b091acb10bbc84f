"""``sdy-pre-order-funcs``: reorder the module's functions so callers come before their
callees (upstream ``transforms/import/pre_order_funcs.cc``; see
https://openxla.org/shardy/sdy_import_passes#-sdy-pre-order-funcs).

Propagation is top-down within a block, so once calls are inlined, visiting functions in
this order emulates it. Functions in the call graph move, in ``iterateFuncs`` pre order,
to the end of the module; everything else (meshes, declarations) keeps its place before
them.
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.call_graph import funcs_in_call_graph_order
from shardy_ref.ir.operation import Operation
from shardy_ref.pass_manager import Pass, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class PreOrderFuncsPass(Pass):
    """Moves functions into pre order of the call graph. See
    ``shardy/dialect/sdy/transforms/import/passes.td`` (``PreOrderFuncsPass``)."""

    NAME = "sdy-pre-order-funcs"

    def run(self, op: Operation, ctx) -> None:
        body = op.regions[0].blocks[0]
        funcs = funcs_in_call_graph_order(op, pre_order=True)
        tail = list(reversed(body))[:len(funcs)][::-1]
        if tail == funcs:  # already in place: the IR is left alone (no verifier run after)
            return
        for func in funcs:
            body.append(func.detach())
