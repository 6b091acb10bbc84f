"""``reduce`` and ``map`` (StableHLO spec, "reduce", "map"; reference ``reduceOp``,
``mapOp``), the ``batch_norm_*`` ops, and the helpers the window and sort kernels share
for running a scalar region over whole arrays.

Reduction order. The spec leaves it implementation-defined (any full binary tree over the
elements in index order, with init values anywhere). We choose, per body:

- a body :func:`~shardy_ref.execute.regions.binary_ufunc` recognises (add, multiply,
  maximum, minimum, and, or, xor) on f32, f64, complex, integers or i1: one NumPy
  ``ufunc.reduce`` over all reduced axes, then combined with the init value. Integer and
  boolean results are exact whatever the order; float sums and products may differ from the
  reference's sequential fold by rounding (NumPy sums pairwise), which is what NumPy code
  computing the same reduction does, and fast. Maximum and minimum also equal the reference
  (their signed zeros are fixed up: ``maximum(-0, +0) = +0`` as the reference's
  ``llvm::maximum``, while ``np.maximum`` returns its first argument on ties);
- any other body, or a narrow float type (f16, bf16, f8...), where the order shows at the
  type's precision: the reference's order exactly, folding ``acc = body(acc..., x...)`` from
  the init values over the reduced positions in ascending lexicographic order, one region
  run per reduced position over all output elements at once (bit-identical results).

Varying operands keep their process dimensions in front; the region then runs over
``process dims + output shape``.

``batch_norm_inference``, ``batch_norm_training`` and ``batch_norm_grad`` follow the spec's
decompositions into ``reduce``/elementwise ops (the reference interpreter refuses them as
"decomposable"; older JAX programs still contain them), each step rounded to the element
type as the decomposed ops would be.
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import batching
from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.kernels.dot import convert_elements
from shardy_ref.execute.regions import apply_region, binary_ufunc, free_values
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor

_FAST_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                                np.complex128))


# -- helpers shared with windows.py and sort.py ---------------------------------------------
def region_prefix(ctx, region, values) -> tuple[int, ...]:
    """The batch dimensions arrays fed to ``region`` carry in front of their own shape:
    the processes' when an operand varies or the region reads outer values, else none."""
    if any(v.batch for v in values) or (ctx.nb and free_values(region)):
        return ctx.batch_shape
    return ()


def batched(ctx, value: Tensor, prefix: tuple[int, ...]) -> np.ndarray:
    """``value``'s array with ``prefix`` batch dimensions in front (a broadcast view)."""
    if not prefix or value.batch:
        return value.data
    return np.broadcast_to(value.data, prefix + value.data.shape)


def fast_ufunc(region, element_type):
    """The NumPy ufunc of a recognised body whose reduction order does not need to match
    the reference's (f32/f64/complex/integers/i1), or None."""
    ufunc = binary_ufunc(region)
    if ufunc is None:
        return None
    dtype = storage_dtype(element_type)
    if dtype in _FAST_DTYPES or (dtype.kind in "biu" and np.dtype(dtype.str) == dtype):
        return ufunc
    return None


def signed_zero_fix(ufunc, result: np.ndarray, elements: np.ndarray, axes, init) -> np.ndarray:
    """Give zero maxima (minima) the sign the reference's ``llvm::maximum`` (``minimum``)
    does: ``+0`` (``-0``) if any element or the init value is ``+0`` (``-0``)."""
    if ufunc not in (np.maximum, np.minimum) or result.dtype.kind != "f":
        return result
    zero = result == 0
    if not zero.any():
        return result
    want_negative = ufunc is np.minimum
    hit = (elements == 0) & (np.signbit(elements) == want_negative)
    hit = np.logical_or.reduce(hit, axis=axes) | ((init == 0) & (np.signbit(init) == want_negative))
    sign = np.where(hit == want_negative, result.dtype.type(-0.0), result.dtype.type(0.0))
    return np.where(zero, sign, result)


def init_array(ctx, init: Tensor, prefix: tuple[int, ...], rank: int) -> np.ndarray:
    """A scalar init value shaped to broadcast against ``prefix + rank`` dimensions."""
    data = batched(ctx, init, prefix)
    return data.reshape(data.shape + (1,) * rank)


# -- reduce -----------------------------------------------------------------------------------
def _check_reduce(inputs, inits, dims, body) -> None:
    shape = inputs[0].shape
    if any(v.shape != shape for v in inputs) or any(v.shape != () for v in inits):
        raise InterpreterError(None, "reduce: inputs must have one shape and init values "
                               "must be scalars")
    if len(set(dims)) != len(dims) or not all(0 <= d < len(shape) for d in dims):
        raise InterpreterError(None, f"reduce: bad dimensions {list(dims)} for rank "
                               f"{len(shape)}")
    if len(body.blocks[0].args) != 2 * len(inputs):
        raise InterpreterError(None, f"reduce: the body takes {len(body.blocks[0].args)} "
                               f"arguments for {len(inputs)} inputs")


def fold(ctx, body, accs: list[np.ndarray], elements: list[np.ndarray], red_shape,
         batch_shape, ufunc=None) -> list[np.ndarray]:
    """``accs = body(accs..., elements[..., idx]...)`` for every ``idx`` of ``red_shape``
    (the trailing axes of each element array) in ascending lexicographic order."""
    for idx in np.ndindex(*red_shape):
        xs = [e[(Ellipsis, *idx)] for e in elements]
        if ufunc is not None:
            accs = [ufunc(accs[0], xs[0])]
        else:
            accs = apply_region(ctx, body, accs + xs, batch_shape)
    return accs


def reduce_arrays(ctx, body, inputs: list[Tensor], inits: list[Tensor], dims,
                  types) -> tuple[list[np.ndarray], tuple]:
    """The reduction of ``inputs`` over ``dims`` (element types ``types``, the body's);
    returns arrays of ``prefix + result shape`` and ``prefix``."""
    prefix = region_prefix(ctx, body, list(inputs) + list(inits))
    nb = len(prefix)
    dims = sorted(int(d) for d in dims)
    shape = inputs[0].shape
    kept = [d for d in range(len(shape)) if d not in dims]
    out_shape = tuple(shape[d] for d in kept)
    xs = [convert_elements(batched(ctx, v, prefix), v.element_type, t)
          for v, t in zip(inputs, types, strict=True)]
    ins = [convert_elements(init_array(ctx, v, prefix, len(out_shape)), v.element_type, t)
           for v, t in zip(inits, types, strict=True)]
    ufunc = fast_ufunc(body, types[0]) if len(inputs) == 1 else None
    axes = batching.axes(nb, dims)
    red_shape = tuple(shape[d] for d in dims)
    if ufunc is not None and int(np.prod(red_shape, dtype=np.int64)):
        with np.errstate(over="ignore", invalid="ignore"):
            r = ufunc(ins[0], ufunc.reduce(xs[0], axis=axes))
        return [signed_zero_fix(ufunc, r, xs[0], axes, ins[0])], prefix
    moved = [np.moveaxis(x, axes, range(x.ndim - len(axes), x.ndim)) for x in xs]
    full = prefix + out_shape
    accs = [np.broadcast_to(a, full) for a in ins]
    ufunc = binary_ufunc(body) if len(inputs) == 1 and _plain(types[0]) else None
    with np.errstate(over="ignore", invalid="ignore"):
        accs = fold(ctx, body, accs, moved, red_shape, full, ufunc)
    if ufunc is not None:
        accs = [signed_zero_fix(ufunc, accs[0], xs[0], axes, ins[0])]
    return [np.broadcast_to(a, full) for a in accs], prefix


def _plain(element_type) -> bool:
    """A NumPy-native dtype whose ufuncs round like the reference (f16: computed in float32
    and rounded once, which is correct for its precision)."""
    dtype = storage_dtype(element_type)
    return np.dtype(dtype.str) == dtype and dtype.kind in "biufc"


@kernel("stablehlo.reduce")
def reduce(ctx, op, *operands):
    n = len(operands) // 2
    inputs, inits = list(operands[:n]), list(operands[n:])
    body = op.regions[0]
    dims = tuple(op.attributes["dimensions"].value)
    _check_reduce(inputs, inits, dims, body)
    types = [a.type.element_type for a in body.blocks[0].args[n:]]
    arrays, prefix = reduce_arrays(ctx, body, inputs, inits, dims, types)
    return [batching.make(op, a, len(prefix), i) for i, a in enumerate(arrays)]


# -- map --------------------------------------------------------------------------------------
@kernel("stablehlo.map")
def map_(ctx, op, *inputs):
    """Apply the computation elementwise: one region run over all elements (and processes).
    ``dimensions`` must be all of them, in order (spec C3)."""
    region = op.regions[0]
    shape = inputs[0].shape
    dims = tuple(op.attributes["dimensions"].value) if "dimensions" in op.attributes else ()
    if dims != tuple(range(len(shape))) or any(v.shape != shape for v in inputs):
        raise InterpreterError(None, f"map: dimensions {list(dims)} must be 0..rank-1 and "
                               "inputs must have one shape")
    prefix = region_prefix(ctx, region, inputs)
    types = [a.type.element_type for a in region.blocks[0].args]
    arrays = [convert_elements(batched(ctx, v, prefix), v.element_type, t)
              for v, t in zip(inputs, types, strict=True)]
    with np.errstate(over="ignore", invalid="ignore"):
        out = apply_region(ctx, region, arrays, prefix + tuple(shape))[0]
    return batching.make(op, out, len(prefix))


# -- batch_norm_* -----------------------------------------------------------------------------
class _Arith:
    """The arithmetic of the spec's batch-norm decompositions in one float type: f32/f64 in
    NumPy directly; narrower floats in float32 rounded to the type after every operation
    (correctly rounded, as each decomposed op would be), sums folded in index order."""

    def __init__(self, element_type):
        self.dtype = storage_dtype(element_type)
        self.narrow = self.dtype not in _FAST_DTYPES

    def up(self, a) -> np.ndarray:
        return np.asarray(a).astype(np.float32 if self.narrow else self.dtype)

    def r(self, a: np.ndarray) -> np.ndarray:
        return a.astype(self.dtype).astype(np.float32) if self.narrow else a

    def sum(self, a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        """Sum over ``axes``, keeping them as size-1 axes."""
        if not self.narrow:
            return np.add.reduce(a, axis=axes, keepdims=True)
        moved = np.moveaxis(a, axes, range(a.ndim - len(axes), a.ndim))
        flat = moved.reshape((*moved.shape[:a.ndim - len(axes)], -1))
        total = np.zeros(flat.shape[:-1], np.float32)
        for k in range(flat.shape[-1]):
            total = self.r(total + flat[..., k])
        return np.expand_dims(total, axes)

    def mean(self, a: np.ndarray, axes: tuple[int, ...], count: int) -> np.ndarray:
        return self.r(self.sum(a, axes) / self.r(self.up(count)))


def _bn_setup(ctx, op, operand: Tensor, per_feature: list[Tensor], others=()):
    """Operand array, per-feature arrays shaped to broadcast along the feature axis, the
    reduced axes, the element count per feature, the arithmetic and the batch rank."""
    feature = op.attributes["feature_index"].value
    rank = len(operand.shape)
    if not 0 <= feature < rank or any(v.shape != (operand.shape[feature],)
                                      for v in per_feature):
        raise InterpreterError(None, f"batch_norm: feature_index {feature} and per-feature "
                               f"operands do not fit {operand.type}")
    nb = batching.batch_of(operand, *per_feature, *others)
    math = _Arith(operand.element_type)
    x = math.up(batched(ctx, operand, ctx.batch_shape[:nb]))
    shape = [1] * rank
    shape[feature] = -1
    feats = [math.up(v.data.reshape(v.data.shape[:v.batch] + tuple(shape))) for v in per_feature]
    axes = tuple(i + nb for i in range(rank) if i != feature)
    count = int(np.prod(operand.shape, dtype=np.int64)) // max(operand.shape[feature], 1)
    eps = math.r(math.up(op.attributes["epsilon"].value))
    return x, feats, axes, count, math, nb, eps


def _normalize(math, x, scale, offset, mean, var, eps):
    stddev = math.r(np.sqrt(math.r(var + eps)))
    return math.r(math.r(scale * math.r(math.r(x - mean) / stddev)) + offset)


def _per_feature(op, data: np.ndarray, nb: int, index: int) -> Tensor:
    return batching.make(op, data.reshape((*data.shape[:nb], -1)), nb, index)


@kernel("stablehlo.batch_norm_inference")
def batch_norm_inference(ctx, op, operand, scale, offset, mean, variance):
    """The spec's decomposition (StableHLO spec, "batch_norm_inference")."""
    x, (s, o, m, v), _, _, math, nb, eps = _bn_setup(ctx, op, operand,
                                                     [scale, offset, mean, variance])
    with np.errstate(all="ignore"):
        out = _normalize(math, x, s, o, m, v, eps)
    return batching.make(op, np.broadcast_to(out, x.shape), nb)


@kernel("stablehlo.batch_norm_training")
def batch_norm_training(ctx, op, operand, scale, offset):
    """The spec's decomposition: batch mean and variance over all but the feature axis."""
    x, (s, o), axes, count, math, nb, eps = _bn_setup(ctx, op, operand, [scale, offset])
    with np.errstate(all="ignore"):
        mean = math.mean(x, axes, count)
        centered = math.r(x - mean)
        var = math.mean(math.r(centered * centered), axes, count)
        out = _normalize(math, x, s, o, mean, var, eps)
    return [batching.make(op, np.broadcast_to(out, x.shape), nb),
            _per_feature(op, mean, nb, 1), _per_feature(op, var, nb, 2)]


@kernel("stablehlo.batch_norm_grad")
def batch_norm_grad(ctx, op, operand, scale, mean, variance, grad_output):
    """The spec's decomposition (after XLA's batchnorm_expander)."""
    if grad_output.shape != operand.shape:
        raise InterpreterError(None, "batch_norm_grad: grad_output must have the operand's "
                               "shape")
    x, (s, m, v), axes, count, math, nb, eps = _bn_setup(ctx, op, operand,
                                                         [scale, mean, variance], [grad_output])
    g = math.up(batched(ctx, grad_output, ctx.batch_shape[:nb]))
    n = math.r(math.up(count))
    with np.errstate(all="ignore"):
        centered = math.r(x - m)
        var_eps = math.r(v + eps)
        stddev = math.r(np.sqrt(var_eps))
        normalized = math.r(centered / stddev)
        sum_g = math.sum(g, axes)
        sum_gc = math.sum(math.r(g * centered), axes)
        i6 = math.r(math.r(math.r(g * n) - sum_g) - math.r(math.r(sum_gc * centered) / var_eps))
        grad_operand = np.broadcast_to(math.r(math.r(math.r(s / stddev) / n) * i6), x.shape)
        grad_scale = math.sum(math.r(g * normalized), axes)
    return [batching.make(op, grad_operand, nb), _per_feature(op, grad_scale, nb, 1),
            _per_feature(op, sum_g, nb, 2)]

