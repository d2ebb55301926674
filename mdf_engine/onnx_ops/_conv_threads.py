"""The convolutions of :mod:`._conv_shift` on the calling thread or shared with worker threads
(issue 22, goal 5: at default threading onnxruntime runs a convolution on every core).

A convolution by shifted slices or a 1x1 one is a list of items, each a block of four filters
(or one) over one chunk of positions of one image and group (:func:`~._conv_shift.shift_item`,
:func:`~._conv_shift.pointwise_item`). The nopython entry points (:func:`conv_shift_g`,
:func:`conv_pointwise_tiles`, used by the compiled backend's ``conv_jit`` and for small
convolutions) run the items in order on the calling thread. From Python,
:func:`conv_shift_shared` and :func:`conv_pointwise_shared` share the items of a convolution of
at least :data:`SHARE_MIN_MACS` with up to ``threads - 1`` worker threads: every thread,
the caller included, takes the next item from one atomic counter (nopython code, no GIL) until
none is left, and the caller then waits only for the items a worker has taken and not yet
finished (the worker threads, their spinning and their count: :mod:`._threads_pool`). A worker that the machine has not scheduled yet takes nothing and costs nothing
(when it runs, it finds the counter spent): on a busy machine the caller does the work alone
instead of waiting for every thread of a fork-join region to be scheduled, as a ``prange``
(or BLAS) region does (the 16 ms convolution of issue 22 on two OpenBLAS threads at load; a
``prange`` form of these kernels measured 12-20 ms for a 0.5 ms convolution at load 7).

Every output value is computed by exactly one item, by the same code and in the same order of
terms as on one thread, so the results are bitwise equal at any thread count; only independent
outputs (filters, positions, images, groups) are shared out, never a sum.

**How many threads** (:func:`conv_threads`, one policy with the BLAS products of
:mod:`._blas`): Numba's thread count of the calling thread (``numba.set_num_threads``,
``NUMBA_NUM_THREADS``; the 1-thread column of benchmarks/cnn_speed.py sets it to 1), at most
``MDF_ENGINE_BLAS_THREADS`` when that is set (:func:`~._blas.thread_cap`: the most threads one
of the engine's products may use, BLAS's or these kernels'), and at most one per
:data:`PART_MIN_MACS` multiply-adds (two from :data:`SHARE_MIN_MACS` on). The compiled backend's convolutions run on its calling
thread (nopython code cannot hand work to Python threads).

``relu_out``: the ``*_relu`` entries and the shared ones given ``relu_out`` also write the
convolution's Relu into that array (C-contiguous, the output's size and dtype: a new array, or
a Concat's part) while each block of values is in cache (the Conv+Relu fusion: the Conv's own
value stays readable); the values are the engine's Relu (:func:`~._conv_shift.relu_value`) of
the output's, bit for bit.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ._conv_shift import (
    CHUNK_INPUT,
    block_start,
    filter_blocks,
    pointwise_item,
    pointwise_items_count,
    relu_value,
    shift_item,
    shift_prepare,
)
from ._conv_simd import (
    VEC_BYTES,
    WIDE,
    _tile,
    tile_1_1_relu,
    tile_1_wide_relu,
    tile_4_1_relu,
    tile_4_wide_relu,
)
from ._threads_pool import (  # noqa: F401 - (_workers, numba_threads: re-exported)
    _workers,
    fetch_add,
    numba_threads,
    share,
    threads_for,
    watch,
)

#: A convolution is shared with one more thread per this many multiply-adds (~25-40 us of one
#: core on the vector tiles; handing it to a worker costs the caller ~10 us).
PART_MIN_MACS = 1 << 20
#: Convolutions of fewer multiply-adds run on the calling thread alone (SqueezeNet's smallest
#: shared ones, 48 -> 192 1x1 at 13x13, have 1.56 M: ~60 us of one core; the small CNN's
#: 16 -> 32 3x3 at 16x16, 1.18 M, is not shared).
SHARE_MIN_MACS = 1_500_000


def conv_threads(macs: int) -> int:
    """The most threads a convolution of ``macs`` multiply-adds called from Python uses now
    (see the module docstring)."""
    if macs < SHARE_MIN_MACS:
        return 1
    return threads_for(max(macs, 2 * PART_MIN_MACS), PART_MIN_MACS)


# ---- shifted slices -------------------------------------------------------------------------


@numba.njit(cache=True)
def _shift_prepare(x, w, bias, group, k, s, d, pb, o, y):
    """The phase-split inputs, layout and output (``y``, or a new array when ``y`` is empty)
    of a convolution by shifted slices."""
    M = w.shape[0]
    xps, offs, Q, T, rows, total, width = shift_prepare(x, M, group, k, s, d, pb, o)
    out = np.empty((x.shape[0], M, o[0], o[1], o[2]), dtype=x.dtype) if y.size == 0 else y
    return xps, offs, out, Q, T, rows, total, width


@numba.njit(cache=True, nogil=True)
def _shift_claim(
    state, total, board, seen, budget, xps, offs, w, bias, of, rf, acc, group, mg, o, Q, T, rows
):
    """Take items of a shared convolution by shifted slices until none is left, then
    :func:`~._threads_pool.watch` for the next task."""
    while True:
        i = fetch_add(state, 0)
        if i >= total:
            return watch(board, seen, budget)
        shift_item(xps, offs, w, bias, of, rf, acc, group, mg, o, Q, T, rows, i)
        fetch_add(state, 1)


@numba.njit(cache=True)
def _shift_serial(x, w, bias, group, k, s, d, pb, o, r, y):
    xps, offs, out, Q, T, rows, total, width = _shift_prepare(x, w, bias, group, k, s, d, pb, o, y)
    wc = np.ascontiguousarray(w)
    bc = np.ascontiguousarray(bias)
    acc = np.empty((4, width), dtype=x.dtype)
    of = out.reshape(-1)
    rf = r.reshape(-1)
    mg = w.shape[0] // group
    for i in range(total):
        shift_item(xps, offs, wc, bc, of, rf, acc, group, mg, o, Q, T, rows, i)
    return out


@numba.njit(cache=True)
def conv_shift(x, w, bias, group, k, s, d, pb, o):
    """Grouped convolution of ``x`` (N, C, D, H, W) by the filters ``w`` (M, C/group *
    kd*kh*kw) plus ``bias`` (M,), with strides ``s``, dilations ``d``, pads ``pb`` before each
    axis and output shape ``o`` (see :mod:`._conv_shift`), on the calling thread. Returns (N,
    M, od, oh, ow) in x's dtype."""
    none = np.empty((0,) * 5, x.dtype)
    return _shift_serial(x, w, bias, group, k, s, d, pb, o, none, none)


@numba.njit(cache=True)
def conv_shift_g(x, w, bias, g):
    """:func:`conv_shift` with the geometry array of ``conv._conv_geometry``."""
    return conv_shift(x, w, bias, g[15], g[0:3], g[3:6], g[6:9], g[9:12], g[12:15])


@numba.njit(cache=True)
def conv_shift_relu_g(x, w, bias, g, r, y):
    """:func:`conv_shift_g`, also writing the Relu of its output into ``r`` (C-contiguous, of
    the output's shape (N, M, od, oh, ow) and x's dtype); the output is ``y`` (the same) unless
    that is empty (then a new array)."""
    return _shift_serial(x, w, bias, g[15], g[0:3], g[3:6], g[6:9], g[9:12], g[12:15], r, y)


_nones: dict[tuple, np.ndarray] = {}


def _none(nd: int, dtype: np.dtype) -> np.ndarray:
    """An empty array of ``nd`` axes: "no output array given" to the nopython kernels."""
    a = _nones.get((nd, dtype))
    if a is None:
        a = _nones[(nd, dtype)] = np.empty((0,) * nd, dtype)
    return a


def _relu_target(
    relu_out: np.ndarray, shape: tuple, dtype: np.dtype, name: str = "relu_out"
) -> np.ndarray:
    """``relu_out`` (or the array ``name``) as an array of ``shape`` to write into (a view: it
    must be C-contiguous, of the output's size and dtype)."""
    if (
        type(relu_out) is not np.ndarray
        or relu_out.dtype != dtype
        or not relu_out.flags.c_contiguous
        or relu_out.size != math.prod(shape)
    ):
        raise ValueError(f"Conv: {name} should be a C-contiguous {dtype} array of {shape}")
    return relu_out.reshape(shape)


def conv_shift_shared(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    g: np.ndarray,
    threads: int,
    relu_out: np.ndarray | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`conv_shift_g` on up to ``threads`` threads (:func:`conv_threads`); ``x`` (N, C,
    D, H, W) C-contiguous, ``w`` (M, K) and ``bias`` (M,) C-contiguous in x's dtype. With
    ``relu_out`` (C-contiguous, the output's size and dtype) the Relu of the output is written
    into it as well; with ``out`` (C-contiguous, the output's shape and dtype) the output is
    written there (with ``relu_out`` only)."""
    o = g[12:15]
    shape = (x.shape[0], w.shape[0], *o)
    if relu_out is not None:
        relu_out = _relu_target(relu_out, shape, x.dtype)
    y = _none(5, x.dtype) if out is None else _relu_target(out, shape, x.dtype, "out")
    if threads <= 1:
        if relu_out is None:
            return conv_shift_g(x, w, bias, g)
        return conv_shift_relu_g(x, w, bias, g, relu_out, y)
    group, k, s, d, pb = int(g[15]), g[0:3], g[3:6], g[6:9], g[9:12]
    xps, offs, out, Q, T, rows, total, width = _shift_prepare(x, w, bias, group, k, s, d, pb, o, y)
    rf = np.empty(0, x.dtype) if relu_out is None else relu_out.reshape(-1)
    common = (xps, offs, w, bias, out.reshape(-1), rf)
    rest = (group, w.shape[0] // group, o, Q, T, rows)
    accs = np.empty((min(threads, total), 4, width), dtype=x.dtype)
    share(_shift_claim, total, lambda j: common + (accs[j],) + rest, len(accs))
    return out


# ---- 1x1 ------------------------------------------------------------------------------------


#: Four filters by two and by three vectors, with the Relu step: the last pixels of a chunk in
#: one group of registers (:func:`_tail_4`).
_tile_4_2_relu = _tile(4, 2, True)
_tile_4_3_relu = _tile(4, 3, True)


@numba.njit(cache=True)
def _tail_4(xf, offs, w, acc, bias, m, r, C, t0, a0, tv, rf):
    """The ``tv`` (1 .. :data:`~._conv_simd.WIDE`) vectors of four filters from pixel ``a0``
    (input ``t0``) in one group of registers, with the Relu step."""
    if tv == 1:
        tile_4_1_relu(xf, offs, w, acc, bias, m, r, C, t0, a0, 1, rf)
    elif tv == 2:
        _tile_4_2_relu(xf, offs, w, acc, bias, m, r, C, t0, a0, 1, rf)
    elif tv == 3:
        _tile_4_3_relu(xf, offs, w, acc, bias, m, r, C, t0, a0, 1, rf)
    else:
        tile_4_wide_relu(xf, offs, w, acc, bias, m, r, C, t0, a0, 1, rf)


@numba.njit(cache=True)
def _pointwise_relu_item(xf, offs, w, acc, rf, bias, P, chunk, item):
    """:func:`~._conv_shift.pointwise_item` with ``rf`` (acc's shape) given: the same items
    and sums, the Relu of each value written beside it by the tiles' last step, from the
    registers (:func:`~._conv_simd._tile`'s ``relu``), not by a second loop over ``acc``. The
    pixels after a chunk's last full group of four filters by ``WIDE`` vectors are one group
    of as many vectors as they need, ending at the chunk's last pixel (overlapping the group
    before, whose values it writes again, equal), where single vectors kept only four sums in
    registers (a 13 x 13 layer's 169 pixels: 41 of them)."""
    M, C = w.shape
    vl = VEC_BYTES // xf.itemsize
    gw = WIDE * vl
    blocks = filter_blocks(M)
    chunks = (P + chunk - 1) // chunk
    b = item % blocks
    c = item // blocks
    n = c // chunks
    p0 = (c - n * chunks) * chunk
    pc = min(chunk, P - p0)
    nw = pc // gw
    n1 = (pc - nw * gw) // vl
    rest = pc - nw * gw - n1 * vl
    t0 = n * C * P + p0
    m, nf = block_start(b, M)
    r = n * M + m
    if nf == 4:
        if nw > 0:
            tile_4_wide_relu(xf, offs, w, acc, bias, m, r, C, t0, p0, nw, rf)
        tail = pc - nw * gw
        if nw > 0 and tail > 0:
            tv = (tail + vl - 1) // vl
            _tail_4(xf, offs, w, acc, bias, m, r, C, t0 + pc - tv * vl, p0 + pc - tv * vl, tv, rf)
            return
        if n1 > 0:
            tile_4_1_relu(xf, offs, w, acc, bias, m, r, C, t0 + nw * gw, p0 + nw * gw, n1, rf)
        if rest > 0:
            tile_4_1_relu(xf, offs, w, acc, bias, m, r, C, t0 + pc - vl, p0 + pc - vl, 1, rf)
    else:
        if nw > 0:
            tile_1_wide_relu(xf, offs, w, acc, bias, m, r, C, t0, p0, nw, rf)
        if n1 > 0:
            tile_1_1_relu(xf, offs, w, acc, bias, m, r, C, t0 + nw * gw, p0 + nw * gw, n1, rf)
        if rest > 0:
            tile_1_1_relu(xf, offs, w, acc, bias, m, r, C, t0 + pc - vl, p0 + pc - vl, 1, rf)


@numba.njit(cache=True)
def _pw_item(xf, offs, w, acc, rf, bias, P, chunk, item):
    """Item ``item`` of a 1x1 convolution, with its Relu when ``rf`` is not empty."""
    if rf.size > 0:
        _pointwise_relu_item(xf, offs, w, acc, rf, bias, P, chunk, item)
    else:
        pointwise_item(xf, offs, w, acc, rf, bias, P, chunk, item)


@numba.njit(cache=True, nogil=True)
def _pointwise_claim(state, total, board, seen, budget, xf, offs, w, acc, rf, bias, P, chunk):
    """Take items of a shared 1x1 convolution until none is left, then
    :func:`~._threads_pool.watch` for the next task."""
    while True:
        i = fetch_add(state, 0)
        if i >= total:
            return watch(board, seen, budget)
        _pw_item(xf, offs, w, acc, rf, bias, P, chunk, i)
        fetch_add(state, 1)


@numba.njit(cache=True)
def _pointwise_prepare(x, w, bias, has_bias, y):
    N, C, P = x.shape
    M = w.shape[0]
    out = np.empty((N, M, P), dtype=x.dtype) if y.size == 0 else y
    gw = WIDE * VEC_BYTES // x.itemsize
    bc = np.ascontiguousarray(bias) if has_bias else np.zeros(M, dtype=x.dtype)
    chunk = max(gw, CHUNK_INPUT // C // gw * gw)
    return out, bc, np.arange(C) * P, chunk, pointwise_items_count(N, M, P, chunk)


@numba.njit(cache=True)
def _pointwise_serial(x, w, bias, has_bias, r, y):
    N, C, P = x.shape
    M = w.shape[0]
    relu = r.size > 0
    out, bc, offs, chunk, total = _pointwise_prepare(x, w, bias, has_bias, y)
    if P < VEC_BYTES // x.itemsize:  # too narrow for a vector: plain loops
        for n in range(N):
            for m in range(M):
                for t in range(P):
                    s = x.dtype.type(0)
                    for c in range(C):
                        s += w[m, c] * x[n, c, t]
                    v = s + bias[m] if has_bias else s
                    out[n, m, t] = v
                    if relu:
                        r[n, m, t] = relu_value(v)
        return out
    acc = out.reshape((N * M, P))
    ra = r.reshape((N * M, P) if relu else (0, 0))
    wc = np.ascontiguousarray(w)
    for i in range(total):
        _pw_item(x.reshape(-1), offs, wc, acc, ra, bc, P, chunk, i)
    return out


@numba.njit(cache=True)
def conv_pointwise_tiles(x, w, bias, has_bias):
    """A 1x1 convolution without stride or padding by the vector tiles of :mod:`._conv_simd`:
    per image ``n`` of ``x`` (N, C, P) the product of the filters ``w`` (M, C) with ``x[n]``
    (C, P), read in place (channel ``c`` of pixel ``t`` at ``c * P + t``), written straight
    into the output's rows, the bias added in registers (see
    :func:`~._conv_shift.pointwise_item`), on the calling thread. Returns (N, M, P) in x's
    dtype."""
    none = np.empty((0, 0, 0), x.dtype)
    return _pointwise_serial(x, w, bias, has_bias, none, none)


@numba.njit(cache=True)
def conv_pointwise_relu(x, w, bias, has_bias, r, y):
    """:func:`conv_pointwise_tiles`, also writing the Relu of its output into ``r``
    (C-contiguous (N, M, P) in x's dtype); the output is ``y`` (the same) unless that is empty
    (then a new array)."""
    return _pointwise_serial(x, w, bias, has_bias, r, y)


def conv_pointwise_shared(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    has_bias: bool,
    threads: int,
    relu_out: np.ndarray | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`conv_pointwise_tiles` on up to ``threads`` threads; ``x`` (N, C, P)
    C-contiguous, ``w`` (M, C) and ``bias`` (M,) C-contiguous in x's dtype. With ``relu_out``
    (C-contiguous, the output's size and dtype) the Relu of the output is written into it as
    well; with ``out`` (the same) the output is written there (with ``relu_out`` only)."""
    N, C, P = x.shape
    M = w.shape[0]
    if relu_out is not None:
        relu_out = _relu_target(relu_out, (N, M, P), x.dtype)
    y = _none(3, x.dtype) if out is None else _relu_target(out, (N, M, P), x.dtype, "out")
    if threads <= 1 or P < VEC_BYTES // x.itemsize:
        if relu_out is None:
            return conv_pointwise_tiles(x, w, bias, has_bias)
        return conv_pointwise_relu(x, w, bias, has_bias, relu_out, y)
    out, bc, offs, chunk, total = _pointwise_prepare(x, w, bias, has_bias, y)
    ra = np.empty((0, 0), x.dtype) if relu_out is None else relu_out.reshape(N * M, P)
    args = (x.reshape(-1), offs, w, out.reshape(N * M, P), ra, bc, P, chunk)
    share(_pointwise_claim, total, lambda j: args, min(threads, total))
    return out
