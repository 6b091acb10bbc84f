"""Quantization: ``stablehlo.uniform_quantize`` and ``stablehlo.uniform_dequantize`` (StableHLO
spec, "uniform_quantize", "uniform_dequantize", "Quantization computations"), and
:func:`route`, which runs any other op on quantized tensors the way the spec defines it.

A quantized tensor's run-time data is its storage integers; its quantization parameters come
from the op's IR types (see :mod:`shardy_ref.execute.quant_types`). The reference interpreter
lowers quantized programs to integer/float math first (``stablehlo-lower-quant``: quantize
in f32 as ``round(clamp(x / scale + zp))``, requantize with a merged scale); we follow the spec's
formulas instead (dequantize, compute in the expressed type, quantize), which agree with that
lowering on the corpus. The oracle (jaxlib) has no quant dialect, so the spec decides.

:func:`route` (for the interpreter's op plan) picks, for an op with quantized operands or
results, how its ordinary kernel runs:

- ``uniform_quantize``/``uniform_dequantize``: their own kernels;
- data movement (``bitcast_convert``, ``reshape``, ``slice``, collectives...): on the storage
  integers, the kernel seeing storage types (spec: these ops move quantized elements);
- control flow and structural ops: unchanged (values pass through);
- reductions with a region (``reduce``, ``sort``, ``scatter``...): an error, not supported;
- everything else: ``dequantize_op_quantize`` (spec "Quantization computations"): quantized
  operands dequantized, the kernel run on expressed types, quantized results quantized.
  This also covers ``compare`` (``dequantize_compare``), ``select``, hybrid ``dot_general``
  and ``convolution`` (float lhs, quantized rhs) and ``is_finite``.
"""
from __future__ import annotations

from shardy_ref.execute import batching
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.quant_types import (
    UniformQuantType,
    dequantize,
    is_quantized,
    quant_type,
    quantize,
    runtime_type,
    storage_tensor_type,
)
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor


def _qtype(t, what: str) -> UniformQuantType | None:
    """The quantization of IR type ``t`` (None if not quantized); InterpreterError if its
    ``!quant`` text is malformed or does not fit the tensor's shape."""
    try:
        q = quant_type(t)
        if q is not None:
            q.check_shape(t.shape)
    except ValueError as e:
        raise InterpreterError(None, f"{what}: {e}") from None
    return q


def _result(op, data, nb: int) -> Tensor:
    """Result 0 of ``op`` holding quantized storage ``data`` (``nb`` batch dimensions)."""
    t = runtime_type(batching.result_type(op, 0, data.shape[nb:]))
    return Tensor(t, data, nb)


@kernel("stablehlo.uniform_quantize")
def uniform_quantize(ctx, op, operand):
    """Spec "uniform_quantize": ``quantize(operand)`` from a float tensor, or
    ``quantize(dequantize(operand))`` from a quantized one (requantization)."""
    rt = op.results[0].type
    q = _qtype(rt, "uniform_quantize result")
    if q is None:
        raise InterpreterError(None, f"uniform_quantize needs a quantized result, got {rt}")
    rank = len(rt.shape)
    src = _qtype(op.operands[0].type, "uniform_quantize operand")
    x = operand.data if src is None else dequantize(operand.data, src, rank)
    return _result(op, quantize(x, q, rank), operand.batch)


@kernel("stablehlo.uniform_dequantize")
def uniform_dequantize(ctx, op, operand):
    """Spec "uniform_dequantize": ``(storage - zero_point) * scale`` in the expressed type."""
    q = _qtype(op.operands[0].type, "uniform_dequantize operand")
    if q is None:
        raise InterpreterError(None, f"uniform_dequantize needs a quantized operand, got "
                               f"{op.operands[0].type}")
    rank = len(op.results[0].type.shape)
    return batching.make(op, dequantize(operand.data, q, rank), operand.batch)


# -- other ops on quantized tensors ----------------------------------------------------------

OWN = frozenset({"stablehlo.uniform_quantize", "stablehlo.uniform_dequantize"})

# values pass through these unchanged (their regions and callees run their own ops)
PASSTHROUGH = frozenset({
    "stablehlo.while", "stablehlo.if", "stablehlo.case", "func.call", "stablehlo.composite",
    "stablehlo.optimization_barrier", "stablehlo.tuple", "stablehlo.get_tuple_element",
    "stablehlo.return", "func.return", "interpreter.print", "interpreter.probe",
    "interpreter.run_parallel", "stablehlo.custom_call",
})

# ops that move quantized elements without arithmetic: run on the storage integers
STORAGE = frozenset({
    "stablehlo.bitcast_convert", "stablehlo.broadcast_in_dim", "stablehlo.concatenate",
    "stablehlo.constant", "stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_gather",
    "stablehlo.dynamic_pad", "stablehlo.dynamic_reshape", "stablehlo.dynamic_slice",
    "stablehlo.dynamic_update_slice", "stablehlo.gather", "stablehlo.get_dimension_size",
    "stablehlo.pad", "stablehlo.reshape", "stablehlo.reverse", "stablehlo.slice",
    "stablehlo.transpose", "stablehlo.all_gather", "stablehlo.all_to_all",
    "stablehlo.collective_broadcast", "stablehlo.collective_permute", "stablehlo.send",
    "stablehlo.recv", "stablehlo.outfeed", "stablehlo.infeed",
})


# ops whose region computes on quantized elements: neither view above is right for them (the
# region's own ops would dequantize again, or binary_ufunc would add storage integers)
REGION_REDUCTIONS = frozenset({
    "stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.select_and_scatter",
    "stablehlo.scatter", "stablehlo.sort", "stablehlo.map", "stablehlo.all_reduce",
    "stablehlo.reduce_scatter", "stablehlo.collective_reduce",
})


class _Typed:
    """Stands for an IR value, with another type."""

    __slots__ = ("type",)

    def __init__(self, type_):
        self.type = type_


class RetypedOp:
    """``op`` as a kernel should see it with other operand and result types (everything else
    read from ``op``): how a quantized op's ordinary kernel runs on storage or expressed
    types."""

    def __init__(self, op, retype):
        self._op = op
        self.operands = tuple(_Typed(retype(v.type)) for v in op.operands)
        self.results = tuple(_Typed(retype(r.type)) for r in op.results)
        self.result_types = tuple(r.type for r in self.results)

    def __getattr__(self, name):
        return getattr(self._op, name)


def _expressed_tensor_type(t):
    q = quant_type(t)
    return t if q is None else t.replace(element_type=q.expressed_type)


def _quantized_ios(op) -> bool:
    return any(is_quantized(getattr(v, "type", None)) for v in (*op.operands, *op.results))


def route(op, fn):
    """The kernel to run ``op`` with: ``fn`` itself unless ``op`` has quantized operands or
    results, then ``fn`` wrapped as the spec defines that op on quantized tensors (see the
    module docstring). Meant for the interpreter's plan, once per op."""
    if op.name in OWN or op.name in PASSTHROUGH or not _quantized_ios(op):
        return fn
    if op.name in STORAGE:
        return _on_storage(op, fn)
    if op.name in REGION_REDUCTIONS:
        return _unsupported
    return _dequantize_op_quantize(op, fn)


def _unsupported(ctx, op, *operands):
    raise InterpreterError(None, f"'{op.name}' on quantized tensors is not supported (its "
                           "region would compute on quantized elements)")


def _on_storage(op, fn):
    view = RetypedOp(op, storage_tensor_type)

    def run(ctx, _op, *operands):
        args = [Tensor(storage_tensor_type(v.type), v.data, v.batch)
                if isinstance(v, Tensor) else v for v in operands]
        outs = fn(ctx, view, *args)
        return _retype_results(op, outs, lambda i, t: t)
    return run


def _dequantize_op_quantize(op, fn):
    view = RetypedOp(op, _expressed_tensor_type)
    ins = [(_qtype(v.type, f"operand {i}"), len(getattr(v.type, "shape", ())))
           for i, v in enumerate(op.operands)]
    outs_q = [(_qtype(r.type, f"result {i}"), len(getattr(r.type, "shape", ())))
              for i, r in enumerate(op.results)]

    def run(ctx, _op, *operands):
        args = []
        for v, (q, rank), typed in zip(operands, ins, view.operands, strict=True):
            if q is not None and isinstance(v, Tensor):
                v = Tensor(typed.type.replace(shape=v.type.shape), dequantize(v.data, q, rank),
                           v.batch)
            args.append(v)
        outs = fn(ctx, view, *args)

        def requantize(i, t):
            q, rank = outs_q[i]
            return t if q is None else Tensor(t.type, quantize(t.data, q, rank), t.batch)
        return _retype_results(op, outs, requantize)
    return run


def _retype_results(op, outs, convert):
    """Give ``outs`` (a value or a list) their IR result types back, after ``convert(i, t)``
    (quantization of result ``i``)."""
    single = not isinstance(outs, (list, tuple))
    values = [outs] if single else list(outs)
    fixed = []
    for i, v in enumerate(values):
        if isinstance(v, Tensor) and is_quantized(op.results[i].type):
            v = convert(i, v)
            t = runtime_type(op.results[i].type).replace(shape=v.type.shape)
            v = Tensor(t, v.data, v.batch)
        fixed.append(v)
    return fixed[0] if single else fixed
