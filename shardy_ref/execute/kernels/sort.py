"""``sort`` (StableHLO spec, "sort"; reference ``sortOp``): sorts 1-D slices of all inputs
together along ``dimension`` (negative counts from the end) by a comparator region.

Two ways, one result (the unique stable order of a strict weak ordering):

- The comparators JAX emits, one ``compare LT`` or ``GT`` of the two arguments of operand
  0 (``FLOAT``, ``TOTALORDER``, ``SIGNED``, ``UNSIGNED`` or none), become a key per element
  and one stable ``np.argsort``. ``TOTALORDER`` orders floats as the spec says (``-NaN <
  -inf < ... < -0 < +0 < ... < inf < NaN``, by bit pattern); ``FLOAT`` compares values
  (``-0 == +0``, kept in input order).
- Any other comparator drives a bottom-up merge sort over every slice at once: at each
  level every element finds its place in the neighbouring run by binary search, so one
  comparator-region run compares one pair for every element of every slice (about
  ``log2(n)^2 / 2`` region runs in all, never one per pair).

Both are stable, also when ``is_stable`` is false: the reference's ``std::sort`` may
reorder elements the comparator finds equal, in an order of its own; a stable order is one
of the orders the spec allows. A comparator that is not a strict weak ordering (``FLOAT``
on NaNs: NaN is neither less nor greater than anything) has no well-defined sorted order;
there NumPy's (NaNs last) or the merge sort's order is ours, and may differ from the
reference's ``std::stable_sort``.
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import batching
from shardy_ref.execute.dtypes import is_bool, is_float, is_integer, storage_dtype, wide
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.regions import apply_region, free_values
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor


# -- recognised comparators -------------------------------------------------------------------
def simple_comparator(region) -> tuple[str, str] | None:
    """``(direction, compare_type)`` of a comparator ``return compare(arg0, arg1)`` with
    direction LT or GT (``compare(arg1, arg0)`` flips it), else None."""
    block = region.blocks[0] if len(region.blocks) == 1 else None
    if block is None or len(block.args) < 2:
        return None
    ops = block.ops
    if len(ops) != 2 or ops[0].name != "stablehlo.compare" or \
            ops[1].operands != (ops[0].results[0],):
        return None
    direction = ops[0].attributes["comparison_direction"].value
    ctype = ops[0].attributes.get("compare_type")
    ctype = ctype.value if ctype is not None else "NOTYPE"
    a0, a1 = block.args[0], block.args[1]
    if direction not in ("LT", "GT") or set(ops[0].operands) != {a0, a1} or a0 is a1:
        return None
    if ops[0].operands[0] is a1:
        direction = "GT" if direction == "LT" else "LT"
    return direction, ctype


def total_order_key(data: np.ndarray, element_type) -> np.ndarray:
    """Signed integers ordered as the floats ``data`` in IEEE totalOrder."""
    dtype = storage_dtype(element_type)
    if dtype.itemsize * 8 == element_type.width and str(element_type) != "f8E8M0FNU":
        bits = data.view(np.dtype(f"i{dtype.itemsize}")).astype(np.int64)
        top = np.int64((1 << (element_type.width - 1)) - 1)
    else:  # f4/f6 in a byte, unsigned f8E8M0FNU: float64 keeps their order, sign and NaN
        bits = data.astype(np.float64).view(np.int64)
        top = np.int64((1 << 63) - 1)
    return np.where(bits < 0, bits ^ top, bits)


def _keys(data: np.ndarray, element_type, direction: str, ctype: str):
    """Keys whose ascending stable argsort is the comparator's order, or None."""
    if is_float(element_type):
        if ctype == "TOTALORDER":
            key = total_order_key(data, element_type)
            return ~key if direction == "GT" else key
        if ctype not in ("FLOAT", "NOTYPE"):
            return None
        key = data.astype(np.float64)
        return -key if direction == "GT" else key
    if is_integer(element_type) or is_bool(element_type):
        key = wide(data, element_type) if not is_bool(element_type) else data.astype(np.int64)
        return ~key if direction == "GT" else key
    return None


# -- the general merge sort -------------------------------------------------------------------
def _merge_level(ctx, region, vals: list[np.ndarray], perm: np.ndarray, width: int):
    """Merge the sorted runs of ``width`` pairwise: each element's new position is its
    place in its run plus the number of elements of the other run that go first."""
    n = perm.shape[-1]
    pos = np.arange(n)
    block, offset = pos // (2 * width) * (2 * width), pos % (2 * width)
    left = offset < width
    left_len = np.minimum(width, n - block)
    right_len = np.clip(n - block - width, 0, width)
    other_start = np.where(left, block + width, block)
    lo = np.zeros(n, np.int64)
    hi = np.where(left, right_len, left_len)
    mine = [np.take_along_axis(v, perm, axis=-1) for v in vals]
    lo, hi = np.broadcast_to(lo, perm.shape).copy(), np.broadcast_to(hi, perm.shape).copy()
    while (lo < hi).any():
        mid = (lo + hi) // 2
        where = np.minimum(other_start + mid, n - 1)
        theirs = [np.take_along_axis(m, where, axis=-1) for m in mine]
        args = []
        for me, them in zip(mine, theirs, strict=True):  # left: them < me? right: me < them?
            args += [np.where(left, them, me), np.where(left, me, them)]
        less = apply_region(ctx, region, args, perm.shape)[0].astype(bool)
        active = lo < hi
        goes_after = np.where(left, less, ~less)
        lo, hi = np.where(active & goes_after, mid + 1, lo), \
            np.where(active & ~goes_after, mid, hi)
    target = block + np.where(left, offset, offset - width) + lo
    out = np.empty_like(perm)
    np.put_along_axis(out, target, perm, axis=-1)
    return out


def merge_sort(ctx, region, vals: list[np.ndarray]) -> np.ndarray:
    """The stable sorting permutation of the last axis of ``vals`` under ``region``."""
    n = vals[0].shape[-1]
    perm = np.broadcast_to(np.arange(n), vals[0].shape).copy()
    width = 1
    while width < n:
        perm = _merge_level(ctx, region, vals, perm, width)
        width *= 2
    return perm


# -- the kernel -------------------------------------------------------------------------------
def _dimension(op, inputs) -> int:
    shape = inputs[0].shape
    rank = len(shape)
    dim = op.attributes["dimension"].value if "dimension" in op.attributes else -1
    if not -rank <= dim < max(rank, 1) or any(v.shape != shape for v in inputs):
        raise InterpreterError(None, f"sort: dimension {dim} out of range for rank {rank}, "
                               "or inputs of different shapes")
    if len(op.regions[0].blocks[0].args) != 2 * len(inputs):
        raise InterpreterError(None, "sort: the comparator must take two arguments per input")
    return dim % rank if rank else 0


@kernel("stablehlo.sort")
def sort(ctx, op, *inputs):
    region = op.regions[0]
    dim = _dimension(op, inputs)
    if not inputs[0].shape:
        return list(inputs)
    if ctx.nb and free_values(region):  # the processes must lead every region batch
        arrays, nb = [ctx.broadcast(v).data for v in inputs], ctx.nb
    else:
        arrays, nb = batching.unify(ctx, *inputs)
    vals = [np.moveaxis(a, nb + dim, -1) for a in arrays]
    recognised = simple_comparator(region)
    keys = None if recognised is None else _keys(vals[0], inputs[0].element_type, *recognised)
    if keys is not None:
        perm = np.argsort(keys, axis=-1, kind="stable")
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            perm = merge_sort(ctx, region, vals)
    outs = [np.moveaxis(np.take_along_axis(v, perm, axis=-1), -1, nb + dim) for v in vals]
    return [Tensor(v.type, o, nb) for v, o in zip(inputs, outs, strict=True)]
