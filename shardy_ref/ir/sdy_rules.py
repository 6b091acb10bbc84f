"""Op sharding rules: how an op's dimensions map to factors (``OpShardingRuleAttr``,
``TensorMappingAttr`` and ``DimMappingAttr``).

``#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=8} reduction={j}>`` says
the op has three factors; each tensor dimension is mapped to the factors listed for it
(``ij`` is a dimension made of factors i then j). Factor symbols are ``i``..``z`` for
indices 0..17, then ``z_1``, ``z_2``, ... (upstream ``factorSymbolString``).
See https://openxla.org/shardy/sdy_dialect#opshardingruleattr.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardy_ref.ir.sdy_axes import SdyAttr

START_AT_Z = 17  # upstream ``kStartAtZ``: index 17 is 'z', 18 is 'z_1'


def factor_symbol(index: int) -> str:
    """Upstream ``factorSymbolString``: 0..17 are ``i``..``z``, then ``z_1``, ``z_2``, ...
    A negative index (only from a wrapped-around ``z_N``) is ``'i' + index`` as a C char."""
    if index <= START_AT_Z:
        return chr((ord("i") + index) % 256)
    return f"z_{index - START_AT_Z}"


@dataclass(frozen=True, slots=True)
class DimMapping(SdyAttr):
    """The factors one dimension is made of, major to minor (``ij``)."""

    MNEMONIC: ClassVar[str] = "dim_mapping"
    factor_indices: tuple[int, ...]

    def params(self) -> str:
        return "".join(factor_symbol(i) for i in self.factor_indices)



@dataclass(frozen=True, slots=True)
class TensorMapping(SdyAttr):
    """One dim mapping per dimension of a tensor: ``[i, jk]`` (``[]`` for a scalar)."""

    MNEMONIC: ClassVar[str] = "tensor_mapping"
    dim_mappings: tuple[DimMapping, ...] = ()

    def params(self) -> str:
        return "[" + ", ".join(d.params() for d in self.dim_mappings) + "]"


    @property
    def rank(self) -> int:
        return len(self.dim_mappings)

    def contains_factor(self, factor: int) -> bool:
        return any(factor in d.factor_indices for d in self.dim_mappings)


@dataclass(frozen=True, slots=True)
class OpShardingRule(SdyAttr):
    """An op's factor mapping plus the special factor sets propagation must respect."""

    MNEMONIC: ClassVar[str] = "op_sharding_rule"
    factor_sizes: tuple[int, ...]
    operand_mappings: tuple[TensorMapping, ...]
    result_mappings: tuple[TensorMapping, ...]
    reduction_factors: tuple[int, ...] = ()
    need_replication_factors: tuple[int, ...] = ()
    permutation_factors: tuple[int, ...] = ()
    blocked_propagation_factors: tuple[int, ...] = ()
    is_custom_rule: bool = False

    def params(self) -> str:
        ops = ", ".join(m.params() for m in self.operand_mappings)
        res = ", ".join(m.params() for m in self.result_mappings)
        out = f"({ops})->({res})"
        if self.factor_sizes:
            out += " {" + ", ".join(f"{factor_symbol(i)}={s}"
                                    for i, s in enumerate(self.factor_sizes)) + "}"
        for keyword, factors in (("reduction", self.reduction_factors),
                                 ("need_replication", self.need_replication_factors),
                                 ("permutation", self.permutation_factors),
                                 ("blocked_propagation", self.blocked_propagation_factors)):
            if factors:
                out += f" {keyword}={{" + ", ".join(map(factor_symbol, factors)) + "}"
        if self.is_custom_rule:
            out += ", custom"
        return f"<{out}>"

    @property
    def num_factors(self) -> int:
        return len(self.factor_sizes)
