"""``onnx::MaxPool``, with its optional ``Indices`` output.

1-D and 2-D inputs are lifted to 3-D. 1-D/2-D MaxPool runs in two separable passes (see
:mod:`._maxpool_rows`) whose interior windows are branch-free loops over flat arrays that LLVM
vectorizes; 3-D pools (and windows lying wholly in the padding) use one loop nest over
``(N, C, D, H, W)``. MaxPool keeps the input dtype (floats, and 8-bit ints computed exactly in
float32). Its window geometry is memoized per input shape and attributes and handed to its
kernels as one int array (see :func:`_maxpool_plan`). MaxUnpool lives in :mod:`.maxunpool`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import as_array, onnx_op
from ._maxpool_rows import maxpool2d_rows, maxpool2d_values
from ._pool_common import POOL_ATTRS, clip_taps
from ._recycle import Recycler
from ._spatial import geometry_array, hashable, ints, lift3, unpack_geometry, window_geometry
from ._spatial_jit import as5d_nb, attr_int, pool_geometry, shaped_like_nb, spatial_nb
from ._threads_pool import fetch_add, share, threads_for, watch

#: A MaxPool is shared with one more thread per this many input values (~30 us of one core),
#: in items of planes of about :data:`ITEM_VALUES` input values (see :func:`_shared_values`).
PART_VALUES = 1 << 17
ITEM_VALUES = 1 << 15


@numba.njit(cache=True)
def _maxpool3d(x, k, s, d, pb, o, storage_order, yf, idf, want_idx):
    """MaxPool of a (N, C, D, H, W) input by one loop nest, into the flat outputs ``yf`` and
    (with ``want_idx``) ``idf``. Serves 3-D pools and those with a window wholly in the
    padding (it gets the plane's first value and the index before the plane's first)."""
    N, C, D, H, W = x.shape
    y = yf.reshape((N, C, o[0], o[1], o[2]))
    idx = idf.reshape((N, C, o[0], o[1], o[2])) if want_idx else idf.reshape((1, 1, 1, 1, 1))
    for n in range(N):
        for c in range(C):
            base = (n * C + c) * D * H * W
            for i in range(o[0]):
                for j in range(o[1]):
                    for q in range(o[2]):
                        best = x[n, c, 0, 0, 0]
                        bi = -1
                        for a in range(k[0]):
                            zi = i * s[0] - pb[0] + a * d[0]
                            if zi < 0 or zi >= D:
                                continue
                            for b in range(k[1]):
                                yj = j * s[1] - pb[1] + b * d[1]
                                if yj < 0 or yj >= H:
                                    continue
                                for e in range(k[2]):
                                    xq = q * s[2] - pb[2] + e * d[2]
                                    if xq < 0 or xq >= W:
                                        continue
                                    v = x[n, c, zi, yj, xq]
                                    if bi < 0 or v > best:
                                        best = v
                                        if storage_order == 0:
                                            bi = (zi * H + yj) * W + xq
                                        else:
                                            bi = zi + D * (yj + H * xq)
                        y[n, c, i, j, q] = best
                        if want_idx:
                            idx[n, c, i, j, q] = base + bi


@numba.njit(cache=True)
def _some_window_in_padding(k, s, d, pb, o, H, W):
    """Whether a 2-D window (rows of ``H``, columns of ``W``) lies wholly in the padding."""
    for q in range(o[2]):
        e0, e1 = clip_taps(q * s[2] - pb[2], k[2], d[2], W)
        if e1 <= e0:
            return True
    for i in range(o[1]):
        b0, b1 = clip_taps(i * s[1] - pb[1], k[1], d[1], H)
        if b1 <= b0:
            return True
    return False


@numba.njit(cache=True)
def _maxpool_y1(x, g, yf):
    """MaxPool values (see :func:`~._maxpool_rows.maxpool2d_values`) of adjacent taps (at most three) with
    stride 1 into the flat ``yf``; ``g`` is a plan's geometry (see :func:`_maxpool_plan`)."""
    k, s, d, pb, o = unpack_geometry(g)
    maxpool2d_values(x, k, s, d, pb, o, yf, 1, 0, x.shape[0] * x.shape[1])


@numba.njit(cache=True)
def _maxpool_y2(x, g, yf):
    """:func:`_maxpool_y1` for stride 2."""
    k, s, d, pb, o = unpack_geometry(g)
    maxpool2d_values(x, k, s, d, pb, o, yf, 2, 0, x.shape[0] * x.shape[1])


@numba.njit(cache=True)
def _maxpool_y0(x, g, yf):
    """:func:`_maxpool_y1` for any other 2-D window."""
    k, s, d, pb, o = unpack_geometry(g)
    maxpool2d_values(x, k, s, d, pb, o, yf, 0, 0, x.shape[0] * x.shape[1])


def _claim_of(step: int):
    """The claim loop (see :mod:`._threads_pool`) of the values kernel of ``step``: item ``i``
    is the planes ``i * per`` to ``(i + 1) * per`` (each plane's values as on one thread)."""

    @numba.njit(cache=True, nogil=True)
    def claim(state, total, board, seen, budget, x, g, yf, per):
        k, s, d, pb, o = unpack_geometry(g)
        planes = x.shape[0] * x.shape[1]
        while True:
            i = fetch_add(state, 0)
            if i >= total:
                return watch(board, seen, budget)
            maxpool2d_values(x, k, s, d, pb, o, yf, step, i * per, min(i * per + per, planes))
            fetch_add(state, 1)

    return claim


_CLAIMS = {_maxpool_y1: _claim_of(1), _maxpool_y2: _claim_of(2), _maxpool_y0: _claim_of(0)}


def _shared_values(values, x5: np.ndarray, g: np.ndarray, yf: np.ndarray) -> None:
    """``values(x5, g, yf)`` (a values kernel of :func:`_maxpool_plan`), its planes shared
    with worker threads when the input is large enough (:mod:`._threads_pool`: bitwise the
    one-thread values, each plane computed by one thread as on one)."""
    n = threads_for(x5.size, PART_VALUES)
    if n <= 1:
        values(x5, g, yf)
        return
    planes = x5.shape[0] * x5.shape[1]
    per = max(1, ITEM_VALUES // max(x5.size // planes, 1))
    total = -(-planes // per)
    share(_CLAIMS[values], total, lambda j: (x5, g, yf, per), min(n, total))


@numba.njit(cache=True)
def _maxpool_yi(x, g, storage_order, yf, idf):
    """MaxPool values and flat indices of a 1-D/2-D input with no window wholly in the
    padding (:func:`~._maxpool_rows.maxpool2d_rows`) into ``yf`` and ``idf``."""
    k, s, d, pb, o = unpack_geometry(g)
    maxpool2d_rows(x, k, s, d, pb, o, storage_order, yf, idf)


@numba.njit(cache=True)
def _maxpool_3d(x, g, storage_order, yf, idf, want_idx):
    """MaxPool of any other input (:func:`_maxpool3d`)."""
    k, s, d, pb, o = unpack_geometry(g)
    _maxpool3d(x, k, s, d, pb, o, storage_order, yf, idf, want_idx)


@functools.lru_cache(maxsize=256)
def _maxpool_plan(
    shape: tuple, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode
) -> tuple:
    """``(geometry, shape5, out_shape, size, values_kernel)`` of a MaxPool of an input of
    ``shape``: ``geometry`` holds the kernel, strides, dilations, pads at the beginning and
    output shape lifted to 3-D, then 1 when the two-pass 2-D kernels serve (1-D/2-D, no
    window wholly in the padding), else 0; ``shape5`` is the input's 5-D view, ``size`` the
    output's number of elements and ``values_kernel`` the values-only kernel for these
    windows (None: the 3-D one). Memoized: a model runs the same MaxPool at every step, and
    working this out costs more than a small pool itself. The kernels take the geometry as
    one array rather than five tuples: Numba types every tuple argument at each call, which
    costs more than a small pool itself."""
    if len(shape) < 3 or len(shape) > 5:
        raise MDFError(f"MaxPool: expected X of shape (N, C, D1[, D2[, D3]]), got {shape}")
    nsp = len(shape) - 2
    if kernel_shape is None or len(kernel_shape) != nsp:
        raise MDFError(f"MaxPool: kernel_shape should have {nsp} values, got {kernel_shape}")
    k = ints(kernel_shape, nsp, 1, "kernel_shape", "MaxPool")
    s = ints(strides, nsp, 1, "strides", "MaxPool")
    d = ints(dilations, nsp, 1, "dilations", "MaxPool")
    out, pb, _ = window_geometry(shape[2:], k, s, d, pads, auto_pad, int(ceil_mode), "MaxPool")
    geo = (lift3(k, 1), lift3(s, 1), lift3(d, 1), lift3(pb, 0), lift3(out, 1))
    shape5 = tuple(shape[:2]) + (1,) * (5 - len(shape)) + tuple(shape[2:])
    rows = nsp <= 2 and not _some_window_in_padding(*geo, shape5[3], shape5[4])
    g = geometry_array(geo, rows)
    out_shape = tuple(shape[:2]) + out
    kernel = None
    if rows:
        kw, sw, dw = geo[0][2], geo[1][2], geo[2][2]
        dense = dw == 1 and kw <= 3
        kernel = (
            _maxpool_y1 if dense and sw == 1 else _maxpool_y2 if dense and sw == 2 else _maxpool_y0
        )
    return g, shape5, out_shape, math.prod(out_shape), kernel


@numba.njit(cache=True)
def maxpool_jit(
    X, auto_pad, ceil_mode, dilations, kernel_shape, pads, strides, storage_order, wanted, Y=None
):
    """nopython MaxPool for the compiled backend: ``(Y, Indices)`` by the kernels
    :func:`max_pool` picks (the geometry from :mod:`._spatial_jit`); with ``wanted`` 1 (the
    node uses Y alone) the Indices are neither computed nor given their shape (one
    uninitialised element), and given ``Y`` (a C-contiguous compiled slot of Y's size,
    ``backends/compiled/into.py``) the values are written there: no new array, no copy."""
    x5 = as5d_nb(X)
    sp = spatial_nb(X)
    if kernel_shape is None:
        raise ValueError("MaxPool needs kernel_shape")
    g, _ = pool_geometry(sp, auto_pad, ceil_mode, dilations, kernel_shape, pads, strides, 0)
    k, s, d, pb, o = unpack_geometry(g)
    N, C = x5.shape[0], x5.shape[1]
    rows = sp.size <= 2 and not _some_window_in_padding(k, s, d, pb, o, x5.shape[3], x5.shape[4])
    g[15] = 1 if rows else 0
    size = N * C * o[0] * o[1] * o[2]
    if Y is None:
        yf = np.empty(size, dtype=x5.dtype)
    else:
        if Y.size != size:
            raise ValueError("a value of another shape than its compiled slot")
        yf = Y.reshape(-1)
    idf = np.empty(1 if wanted == 1 else size, dtype=np.int64)
    order = attr_int(storage_order, 0)
    if wanted == 1:
        if not rows:
            _maxpool_3d(x5, g, 0, yf, idf, False)
        elif d[2] == 1 and k[2] <= 3 and s[2] == 1:
            _maxpool_y1(x5, g, yf)
        elif d[2] == 1 and k[2] <= 3 and s[2] == 2:
            _maxpool_y2(x5, g, yf)
        else:
            _maxpool_y0(x5, g, yf)
    elif rows:
        _maxpool_yi(x5, g, order, yf, idf)
    else:
        _maxpool_3d(x5, g, order, yf, idf, True)
    shape5 = (N, C, o[0], o[1], o[2])
    ishape = (1, 1, 1, 1, 1) if wanted == 1 else shape5
    return shaped_like_nb(yf.reshape(shape5), X), shaped_like_nb(idf.reshape(ishape), X)


def prepare_max_pool(consts: list[tuple[bool, Any]], attrs: dict[str, Any]):
    """A MaxPool whose Indices nobody reads, bound once (see
    :mod:`mdf_engine.interpreter_lean`): the returned ``run(X)`` gives a C-contiguous
    float32/float64 ``X`` the values :func:`max_pool` gives it (the same plan and kernels, the
    attributes read once, the plan memoized per shape); any other ``X`` goes to
    :func:`max_pool`. None when the Indices are wanted or an attribute cannot be a key."""
    if attrs.get("outputs_wanted") != 1:
        return None
    names = ("kernel_shape", "strides", "dilations", "pads")
    key = tuple(hashable(attrs.get(n)) for n in names)
    key += (attrs.get("auto_pad", "NOTSET"), attrs.get("ceil_mode", 0))
    try:
        hash(key)
    except TypeError:
        return None
    memo: dict[tuple, tuple] = {}
    ys = Recycler()  # (the values, handed out again once nothing refers to them)

    def run(X: Any) -> tuple[np.ndarray, ...]:
        if type(X) is np.ndarray and X.flags.c_contiguous:
            dt = X.dtype
            if dt == _F32 or dt == _F64:
                plan = memo.get(X.shape)
                if plan is None:
                    plan = memo[X.shape] = _maxpool_plan(X.shape, *key)
                g, shape5, shape, size, values = plan
                yf = ys.empty((size,), dt)
                if values is not None:
                    _shared_values(values, X.reshape(shape5), g, yf)
                else:
                    _maxpool_3d(X.reshape(shape5), g, 0, yf, _NO_INDEX, False)
                return (yf.reshape(shape),)
        return max_pool(X, **attrs)

    return run


_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


@onnx_op(
    "MaxPool",
    inputs=("X",),
    outputs=("Y", "Indices"),
    since=1,
    attributes={**POOL_ATTRS, "storage_order": 0},
    skips_outputs=True,
    prepare=prepare_max_pool,
    jit=maxpool_jit,
)
def max_pool(
    X: Any,
    *,
    auto_pad="NOTSET",
    ceil_mode=0,
    dilations=None,
    kernel_shape=None,
    pads=None,
    strides=None,
    storage_order=0,
    outputs_wanted: int | None = None,
) -> tuple[np.ndarray, ...]:
    """Max over each window, and the flat index (over N, C and the unpadded spatial axes,
    row-major, or column-major in the spatial axes when storage_order=1) of the maximum.
    With ``outputs_wanted=1`` (a node without the Indices output) only Y is computed."""
    X = as_array(X)
    key = (
        X.shape,
        hashable(kernel_shape),
        hashable(strides),
        hashable(dilations),
        hashable(pads),
        auto_pad,
        ceil_mode,
    )
    try:
        g, shape5, shape, size, values = _maxpool_plan(*key)
    except TypeError:  # an attribute given as an array cannot be a memo key
        g, shape5, shape, size, values = _maxpool_plan.__wrapped__(*key)
    dt = X.dtype
    if dt == np.float32 or dt == np.float64 or (dt.kind in "iu" and dt.itemsize > 2):
        x5 = np.ascontiguousarray(X).reshape(shape5)
    else:  # float16, 8/16-bit ints: exact in float32, and no kernels of their own to compile
        x5 = np.ascontiguousarray(X, dtype=np.float32).reshape(shape5)
    yf = np.empty(size, dtype=x5.dtype)
    if outputs_wanted == 1:
        if values is not None:
            values(x5, g, yf)
        else:
            _maxpool_3d(x5, g, 0, yf, _NO_INDEX, False)
        return (yf.reshape(shape).astype(dt, copy=False),)
    idf = np.empty(size, dtype=np.int64)
    if values is not None:
        _maxpool_yi(x5, g, int(storage_order), yf, idf)
    else:
        _maxpool_3d(x5, g, int(storage_order), yf, idf, True)
    return yf.reshape(shape).astype(dt, copy=False), idf.reshape(shape)


_NO_INDEX = np.empty(1, dtype=np.int64)
