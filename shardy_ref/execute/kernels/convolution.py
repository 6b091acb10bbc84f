"""``convolution`` and ``dynamic_conv`` (StableHLO spec, "convolution"; reference
``convolutionOp``).

The spec defines a convolution as one ``dot_general`` per output spatial position: the lhs
is padded (``padding``, negative entries crop) with interior holes (``lhs_dilation``), a
window of it (``window_strides``, ``rhs_dilation``, ``window_reversal``) is contracted with
the kernel over the spatial and input-feature dimensions, and ``feature_group_count`` /
``batch_group_count`` split the lhs features / batch and the kernel's output features into
groups whose results are concatenated along the output features.

We compute the same thing as one contraction (im2col): gather every window into a
``[..., positions, window * features]`` array (``sliding_window_view``, no Python loop over
positions), and contract it with the kernel in one :func:`~.dot.contract` call whose batch
dimensions are the groups (and the processes, when both operands vary). Elements are first
converted to the result element type, as the reference does (integer convolutions
accumulate in the result type), and the contracting positions are ordered as the
reference's (window positions in lexicographic order, then input features), so narrow
float results match it bit for bit; f32/f64 go through BLAS (see :mod:`.dot`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from shardy_ref.execute import batching
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.kernels.dot import contract, convert_elements
from shardy_ref.execute.registry import kernel, per_process
from shardy_ref.execute.values import Tensor


@dataclass(frozen=True, slots=True)
class ConvWindow:
    """The window attributes of a convolution, one entry per spatial dimension."""

    strides: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]
    lhs_dilation: tuple[int, ...]
    rhs_dilation: tuple[int, ...]
    reversal: tuple[bool, ...]


def _array_attr(op, name: str, default: tuple) -> tuple:
    attr = op.attributes.get(name)
    return default if attr is None else tuple(attr.value)


def _window(op, rank: int, padding) -> ConvWindow:
    ones = (1,) * rank
    w = ConvWindow(_array_attr(op, "window_strides", ones), padding,
                   _array_attr(op, "lhs_dilation", ones), _array_attr(op, "rhs_dilation", ones),
                   tuple(bool(v) for v in _array_attr(op, "window_reversal", (False,) * rank)))
    if any(len(x) != rank for x in (w.strides, w.padding, w.lhs_dilation, w.rhs_dilation,
                                   w.reversal)):
        raise InterpreterError(None, f"convolution window attributes must have {rank} entries")
    if min(w.strides + w.lhs_dilation + w.rhs_dilation, default=1) < 1:
        raise InterpreterError(None, "convolution strides and dilations must be positive")
    return w


def _padding_attr(op, rank: int) -> tuple:
    attr = op.attributes.get("padding")
    if attr is None:
        return ((0, 0),) * rank
    values = [int(v) for v in attr.values] * (rank * 2 if attr.is_splat else 1)
    return tuple((values[2 * i], values[2 * i + 1]) for i in range(len(values) // 2))


def _pad(x: np.ndarray, axes: tuple[int, ...], window: ConvWindow) -> np.ndarray:
    """Zero-pad ``x`` along ``axes``: interior ``lhs_dilation - 1``, edges ``padding``
    (negative edges crop)."""
    shape, where, crop = list(x.shape), [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for ax, (lo, hi), dil in zip(axes, window.padding, window.lhs_dilation, strict=True):
        size = x.shape[ax]
        dilated = (size - 1) * dil + 1 if size else 0
        shape[ax] = max(lo, 0) + dilated + max(hi, 0)
        where[ax] = slice(max(lo, 0), max(lo, 0) + dilated, dil)
        crop[ax] = slice(max(-lo, 0), max(shape[ax] - max(-hi, 0), max(-lo, 0)))
    out = np.zeros(shape, x.dtype)
    out[tuple(where)] = x
    return out[tuple(crop)]


def _patches(lhs: np.ndarray, nb: int, kernel_shape: tuple, out_shape: tuple,
             window: ConvWindow) -> np.ndarray:
    """``lhs [P.., N, S.., C]`` -> windows ``[P.., N, O.., K.., C]`` (a view when it can)."""
    d = len(kernel_shape)
    spatial = tuple(range(nb + 1, nb + 1 + d))
    padded = _pad(lhs, spatial, window)
    extent = tuple((k - 1) * r + 1 for k, r in zip(kernel_shape, window.rhs_dilation,
                                                    strict=True))
    view = sliding_window_view(padded, extent, axis=spatial)  # [P.., N, S'.., C, E..]
    index = [slice(None)] * (nb + 1)
    index += [slice(0, (o - 1) * s + 1, s) for o, s in zip(out_shape, window.strides,
                                                           strict=True)]
    index += [slice(None)]
    index += [slice(None, None, -r) if rev else slice(None, None, r)
              for r, rev in zip(window.rhs_dilation, window.reversal, strict=True)]
    view = view[tuple(index)]  # [P.., N, O.., C, K..]
    c = nb + 1 + d
    return np.moveaxis(view, c, -1)


def conv_arrays(lhs: np.ndarray, lhs_nb: int, rhs: np.ndarray, rhs_nb: int, dn,
                window: ConvWindow, groups: tuple[int, int], out_type) -> np.ndarray:
    """The convolution of ``lhs``/``rhs`` (elements of the result type, ``*_nb`` process
    dimensions in front) as an array of ``process dims + out_type.shape``."""
    fg, bg = groups
    d = len(dn.input_spatial_dimensions)
    lhs = np.moveaxis(lhs, [lhs_nb + a for a in (dn.input_batch_dimension,
                                                 *dn.input_spatial_dimensions,
                                                 dn.input_feature_dimension)],
                      range(lhs_nb, lhs_nb + d + 2))
    rhs = np.moveaxis(rhs, [rhs_nb + a for a in (*dn.kernel_spatial_dimensions,
                                                 dn.kernel_input_feature_dimension,
                                                 dn.kernel_output_feature_dimension)],
                      range(rhs_nb, rhs_nb + d + 2))
    proc = lhs.shape[:lhs_nb] or rhs.shape[:rhs_nb]
    n, c = lhs.shape[lhs_nb], lhs.shape[-1]
    ksh, i_feat, o_feat = rhs.shape[rhs_nb:rhs_nb + d], rhs.shape[-2], rhs.shape[-1]
    osp = tuple(out_type.shape[a] for a in dn.output_spatial_dimensions)
    nbatch, oj = n // bg, o_feat // (fg * bg)
    m, kc = nbatch * int(np.prod(osp, dtype=np.int64)), int(np.prod(ksh, dtype=np.int64)) * i_feat
    if min(osp, default=1) <= 0 or m == 0 or o_feat == 0:
        res = np.zeros((*proc, nbatch, *osp, o_feat), lhs.dtype)
    else:
        p = _patches(lhs, lhs_nb, ksh, osp, window)  # [P.., N, O.., K.., C]
        p = p.reshape((*lhs.shape[:lhs_nb], bg, nbatch, *osp, *ksh, fg, c // fg))
        q = lhs_nb  # axes: P.. | bg | nbatch | O.. | K.. | fg | I
        p = p.transpose(*range(q), q, q + 2 + 2 * d, q + 1, *range(q + 2, q + 2 + 2 * d),
                        q + 3 + 2 * d)
        p = p.reshape((*lhs.shape[:lhs_nb], bg, fg, m, kc))
        r = rhs.reshape((*rhs.shape[:rhs_nb], *ksh, i_feat, fg, bg, oj))
        s = rhs_nb
        r = r.transpose(*range(s), s + d + 2, s + d + 1, *range(s, s + d + 1), s + d + 3)
        r = r.reshape((*rhs.shape[:rhs_nb], bg, fg, kc, oj))
        res = _grouped_contract(p, lhs_nb, r, rhs_nb, out_type.element_type)  # [P.., bg, fg, m, oj]
        q = len(proc)
        res = res.transpose(*range(q), q + 2, q + 1, q, q + 3)  # [P.., m, fg, bg, oj]
        res = res.reshape((*proc, nbatch, *osp, o_feat))
    order = [0] * (d + 2)
    for our, theirs in enumerate((dn.output_batch_dimension, *dn.output_spatial_dimensions,
                                  dn.output_feature_dimension)):
        order[theirs] = our + len(proc)
    return res.transpose(*range(len(proc)), *order)


def _grouped_contract(p: np.ndarray, p_nb: int, r: np.ndarray, r_nb: int, element_type):
    """``p [P.., G1, G2, M, K] @ r [P.., G1, G2, K, N]``; a varying lhs next to a uniform
    kernel folds its processes into M, so BLAS sees one large product per group."""
    if p_nb and not r_nb:
        proc = p.shape[:p_nb]
        pp = np.moveaxis(p, range(p_nb), range(2, 2 + p_nb))  # [G1, G2, P.., M, K]
        g1, g2, m, k = p.shape[p_nb], p.shape[p_nb + 1], p.shape[-2], p.shape[-1]
        pp = pp.reshape(g1, g2, -1, k)
        out = contract(pp, r, element_type).reshape((g1, g2, *proc, m, r.shape[-1]))
        return np.moveaxis(out, range(2, 2 + p_nb), range(p_nb))
    return contract(p, r, element_type)


def _check(lhs: Tensor, rhs: Tensor, dn, groups: tuple[int, int], rank: int) -> None:
    fg, bg = groups
    c = lhs.shape[dn.input_feature_dimension]
    n = lhs.shape[dn.input_batch_dimension]
    i_feat = rhs.shape[dn.kernel_input_feature_dimension]
    o_feat = rhs.shape[dn.kernel_output_feature_dimension]
    if fg < 1 or bg < 1 or c != i_feat * fg or n % bg or o_feat % (fg * bg) or \
            len(dn.kernel_spatial_dimensions) != rank:
        raise InterpreterError(None, f"convolution operands {lhs.type} and {rhs.type} do not "
                               f"fit feature_group_count={fg}, batch_group_count={bg}")


def run_conv(ctx, op, lhs: Tensor, rhs: Tensor, padding) -> Tensor:
    dn = op.attributes["dimension_numbers"]
    rank = len(dn.input_spatial_dimensions)
    groups = (op.attributes["feature_group_count"].value if "feature_group_count"
              in op.attributes else 1,
              op.attributes["batch_group_count"].value if "batch_group_count"
              in op.attributes else 1)
    _check(lhs, rhs, dn, groups, rank)
    window = _window(op, rank, padding)
    out_type = op.results[0].type
    if out_type.shape is None or any(s is None for s in out_type.shape):
        raise InterpreterError(None, "convolution with a dynamic result shape")
    et = out_type.element_type
    a = convert_elements(lhs.data, lhs.element_type, et)
    b = convert_elements(rhs.data, rhs.element_type, et)
    nbl, nbr = lhs.batch, rhs.batch
    if nbl and nbr and nbl != nbr:
        a = ctx.broadcast(Tensor(lhs.type, a, nbl)).data
        b = ctx.broadcast(Tensor(rhs.type, b, nbr)).data
        nbl = nbr = ctx.nb
    data = conv_arrays(a, nbl, b, nbr, dn, window, groups, out_type)
    return batching.make(op, data, max(nbl, nbr))


@kernel("stablehlo.convolution")
def convolution(ctx, op, lhs, rhs) -> Tensor:
    rank = len(op.attributes["dimension_numbers"].input_spatial_dimensions)
    return run_conv(ctx, op, lhs, rhs, _padding_attr(op, rank))


@per_process
def _dynamic_conv(ctx, op, lhs, rhs, padding) -> Tensor:
    values = [int(v) for v in np.asarray(padding.data).reshape(-1)]
    pads = tuple((values[2 * i], values[2 * i + 1]) for i in range(len(values) // 2))
    return run_conv(ctx, op, lhs, rhs, pads)


@kernel("stablehlo.dynamic_conv")
def dynamic_conv(ctx, op, lhs, rhs, padding) -> Tensor:
    """``convolution`` with ``padding`` an operand; a padding that differs between processes
    runs per process (rare: JAX computes it from static shapes)."""
    if padding.varying:
        return _dynamic_conv(ctx, op, lhs, rhs, padding)
    return _dynamic_conv.__wrapped__(ctx, op, lhs, rhs, padding)
