"""The IR: types, builtin/sdy/stablehlo attributes, and the generic op graph."""
from shardy_ref.ir.builtin_attrs import (
    ArrayAttr,
    Attribute,
    DenseArrayAttr,
    DenseElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    UnitAttr,
)
from shardy_ref.ir.diagnostics import Diagnostic, ParseError, PassError, ShardyRefError, VerifyError
from shardy_ref.ir.location import Location
from shardy_ref.ir.module import Module
from shardy_ref.ir.operation import (
    Block,
    BlockArgument,
    Operation,
    OpOperand,
    OpResult,
    Region,
    Value,
)
from shardy_ref.ir.sdy_axes import (
    AxisRef,
    AxisRefList,
    ListOfAxisRefLists,
    Mesh,
    MeshAxis,
    SubAxisInfo,
)
from shardy_ref.ir.sdy_rules import DimMapping, OpShardingRule, TensorMapping
from shardy_ref.ir.sdy_sharding import (
    AllToAllParam,
    AllToAllParamList,
    DimensionSharding,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
)
from shardy_ref.ir.types import (
    ComplexType,
    FloatType,
    FunctionType,
    IndexType,
    IntegerType,
    RankedTensorType,
    TokenType,
    TupleType,
    Type,
)

__all__ = [
    "AllToAllParam", "AllToAllParamList", "ArrayAttr", "Attribute", "AxisRef", "AxisRefList",
    "Block", "BlockArgument", "ComplexType", "DenseArrayAttr", "DenseElementsAttr", "Diagnostic",
    "DictionaryAttr", "DimMapping", "DimensionSharding", "FloatAttr", "FloatType", "FunctionType",
    "IndexType", "IntegerAttr", "IntegerType", "ListOfAxisRefLists", "Location", "ManualAxes",
    "Mesh", "MeshAxis", "Module", "OpOperand", "OpResult", "OpShardingRule", "Operation",
    "ParseError",
    "PassError", "RankedTensorType", "Region", "ShardyRefError", "StringAttr", "SubAxisInfo",
    "SymbolRefAttr", "TensorMapping", "TensorSharding", "TensorShardingPerValue", "TokenType",
    "TupleType", "Type", "TypeAttr", "UnitAttr", "Value", "VerifyError",
]
