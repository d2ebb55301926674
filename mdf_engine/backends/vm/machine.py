"""Tier 0's machine: one engine-wide ``@njit(cache=True)`` function that runs a program.

A program is a table of instructions (rows of :data:`WIDTH` int64 numbers) over one float64
array, the heap ``H``: every value of a run (the compiled state's scalars and arrays, the
scheduler's counters, locals, temporaries and constants) is a run of heap elements at a fixed
offset. An instruction names its operands by offset; an element-wise instruction covers ``n``
elements, an operand read with stride 0 (a scalar broadcast) or 1. The schedule log is the
only other array (``logbuf``, int64). Model values and the model's own text never appear in
the code: only offsets, counts and operation numbers do.

The machine is compiled once per installation (Numba's cache, like the registry's kernels),
so a model runs without any code of its own being compiled. It is slower than the generated
code (every instruction is a dispatch), which is why only short runs use it (see
:mod:`mdf_engine.backends.vm`).

Columns of a row: ``op, sub, d, a, b, c, n, fl, e, f`` (:data:`OP` ...). ``fl`` says how
each operand of an element-wise instruction is read, two bits each (``a``: bits 0-1, ``b``:
2-3, ``c``: 4-5): 0 every element reads ``x`` (a scalar), 1 element ``i`` is at ``x + i``,
2 at ``x + i % size`` (numpy's broadcast of trailing axes; the size is ``e`` for ``a`` and
``f`` for ``b``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

WIDTH = 10
OP, SUB, D, A, B, C, N, FL, E, F = range(WIDTH)

# -- operations -------------------------------------------------------------------------------
#: stop
HALT = 0
#: ``H[d+i] = unary[sub](a[i])`` (operands as ``fl`` says)
UN = 1
#: ``H[d+i] = binary[sub](a[i], b[i])``
BIN = 2
#: ``H[d+i] = a[i] if c[i] != 0 else b[i]`` (no trailing-axes broadcast)
WHERE = 3
#: jump to row ``d``
JMP = 4
#: jump to row ``d`` when ``H[a] == 0``
JZ = 5
#: a checked index: ``H[d] = H[b]`` wrapped if negative; out of ``[-n, n)`` it reports in the
#: ``err`` row (field ``c``, axis ``f``; the step is ``H[e]``) and gives 0
CHK = 6
#: ``H[d+t] = H[a + H[b]*e + H[c]*f + t]`` for ``t < n`` (``c < 0``: no second index)
LDX = 7
#: ``H[a + H[b]*e + H[c]*f + t] = H[d + t]`` (or ``H[d]`` for all, ``fl`` 0) for ``t < n``
STX = 8
#: ``H[d]`` (m x q) = ``H[a]`` (m x k) @ ``H[b]`` (k x q); ``m = c``, ``k = e``, ``q = f``
DOT = 9
#: ``H[d] = reduction[sub](H[a : a+n])``
RED = 10
#: ``logbuf[int(H[b])] = int(H[a])``
LOG = 11
#: ``H[d] = len(logbuf)``
LOGLEN = 12

# -- unary operations (``sub`` of UN) --------------------------------------------------------
UNARY = (
    "copy neg not abs sin cos tan exp log sqrt tanh sinh cosh arcsin arccos arctan floor "
    "ceil log10 log2 log1p expm1 sign exp2 arcsinh arccosh arctanh square reciprocal bool "
    "isnan isinf isfinite trunc rint"
).split()
U = {name: k for k, name in enumerate(UNARY)}

# -- binary operations (``sub`` of BIN) ------------------------------------------------------
BINARY = (
    "add sub mul div pow floordiv mod lt le gt ge eq ne and or maximum minimum arctan2 "
    "hypot fmod copysign"
).split()
BI = {name: k for k, name in enumerate(BINARY)}

# -- reductions (``sub`` of RED) -------------------------------------------------------------
REDUCTIONS = "sum prod max min mean".split()
R = {name: k for k, name in enumerate(REDUCTIONS)}

#: the err row's offset in the heap, and the offset of the update counter (meta entries)
META_ERR, META_STEP = 0, 1


@njit(cache=True, error_model="numpy")
def _unary(s, x):
    if s == 0:
        return x
    if s == 1:
        return -x
    if s == 2:
        return 1.0 if x == 0.0 else 0.0
    if s == 3:
        return abs(x)
    if s == 4:
        return np.sin(x)
    if s == 5:
        return np.cos(x)
    if s == 6:
        return np.tan(x)
    if s == 7:
        return np.exp(x)
    if s == 8:
        return np.log(x)
    if s == 9:
        return np.sqrt(x)
    if s == 10:
        return np.tanh(x)
    if s == 11:
        return np.sinh(x)
    if s == 12:
        return np.cosh(x)
    if s == 13:
        return np.arcsin(x)
    if s == 14:
        return np.arccos(x)
    if s == 15:
        return np.arctan(x)
    if s == 16:
        return np.floor(x)
    if s == 17:
        return np.ceil(x)
    if s == 18:
        return np.log10(x)
    if s == 19:
        return np.log2(x)
    if s == 20:
        return np.log1p(x)
    if s == 21:
        return np.expm1(x)
    if s == 22:
        return np.sign(x)
    if s == 23:
        return np.exp2(x)
    if s == 24:
        return np.arcsinh(x)
    if s == 25:
        return np.arccosh(x)
    if s == 26:
        return np.arctanh(x)
    if s == 27:
        return x * x
    if s == 28:
        return 1.0 / x
    if s == 29:
        return 0.0 if x == 0.0 else 1.0
    if s == 30:
        return 1.0 if math.isnan(x) else 0.0
    if s == 31:
        return 1.0 if math.isinf(x) else 0.0
    if s == 32:
        return 1.0 if math.isfinite(x) else 0.0
    if s == 33:
        return np.trunc(x)
    return np.rint(x)


@njit(cache=True, error_model="numpy")
def _binary(s, x, y):
    if s == 0:
        return x + y
    if s == 1:
        return x - y
    if s == 2:
        return x * y
    if s == 3:
        return x / y
    if s == 4:
        return x**y
    if s == 5:
        return x // y
    if s == 6:
        return x % y
    if s == 7:
        return 1.0 if x < y else 0.0
    if s == 8:
        return 1.0 if x <= y else 0.0
    if s == 9:
        return 1.0 if x > y else 0.0
    if s == 10:
        return 1.0 if x >= y else 0.0
    if s == 11:
        return 1.0 if x == y else 0.0
    if s == 12:
        return 1.0 if x != y else 0.0
    if s == 13:
        return 1.0 if (x != 0.0 and y != 0.0) else 0.0
    if s == 14:
        return 1.0 if (x != 0.0 or y != 0.0) else 0.0
    if s == 15:
        return np.maximum(x, y)
    if s == 16:
        return np.minimum(x, y)
    if s == 17:
        return np.arctan2(x, y)
    if s == 18:
        return np.hypot(x, y)
    if s == 19:
        return np.fmod(x, y)
    return np.copysign(x, y)


@njit(cache=True, error_model="numpy")
def _reduce(s, H, a, n):
    if s == 0 or s == 4:
        acc = 0.0
        for i in range(n):
            acc += H[a + i]
        return acc / n if s == 4 else acc
    if s == 1:
        acc = 1.0
        for i in range(n):
            acc *= H[a + i]
        return acc
    acc = H[a]
    for i in range(1, n):
        x = H[a + i]
        if s == 2:
            if x > acc or math.isnan(x):
                acc = x
        elif x < acc or math.isnan(x):
            acc = x
    return acc


@njit(cache=True)
def _at(mode, i, size):
    """Where element ``i`` of an operand read in ``mode`` is (see the module docstring)."""
    if mode == 1:
        return i
    if mode == 2:
        return i % size
    return 0


@njit(cache=True, error_model="numpy")
def execute(code: np.ndarray, H: np.ndarray, logbuf: np.ndarray, meta: np.ndarray) -> None:
    """Run ``code`` over the heap ``H`` until its HALT (see the module docstring)."""
    pc = 0
    while True:
        op = code[pc, 0]
        if op == BIN:
            s, d, a, b, n, fl = (
                code[pc, 1],
                code[pc, 2],
                code[pc, 3],
                code[pc, 4],
                code[pc, 6],
                code[pc, 7],
            )
            ma, mb, ea, eb = fl & 3, (fl >> 2) & 3, code[pc, 8], code[pc, 9]
            for i in range(n):
                H[d + i] = _binary(s, H[a + _at(ma, i, ea)], H[b + _at(mb, i, eb)])
            pc += 1
        elif op == UN:
            s, d, a, n, fl, ea = (
                code[pc, 1],
                code[pc, 2],
                code[pc, 3],
                code[pc, 6],
                code[pc, 7],
                code[pc, 8],
            )
            ma = fl & 3
            for i in range(n):
                H[d + i] = _unary(s, H[a + _at(ma, i, ea)])
            pc += 1
        elif op == JZ:
            if H[code[pc, 3]] == 0.0:
                pc = code[pc, 2]
            else:
                pc += 1
        elif op == JMP:
            pc = code[pc, 2]
        elif op == WHERE:
            d, a, b, c, n, fl = (
                code[pc, 2],
                code[pc, 3],
                code[pc, 4],
                code[pc, 5],
                code[pc, 6],
                code[pc, 7],
            )
            ma, mb, mc = fl & 3, (fl >> 2) & 3, (fl >> 4) & 3
            for i in range(n):
                H[d + i] = (
                    H[a + _at(ma, i, 0)] if H[c + _at(mc, i, 0)] != 0.0 else H[b + _at(mb, i, 0)]
                )
            pc += 1
        elif op == CHK:
            n = code[pc, 6]
            i = int(H[code[pc, 4]])
            if i < -n or i >= n:
                err = meta[META_ERR]
                if H[err] == 0.0:
                    H[err] = -3.0
                    H[err + 1] = code[pc, 5]
                    H[err + 2] = H[meta[META_STEP]]
                    H[err + 3] = i
                    H[err + 4] = n
                    H[err + 5] = code[pc, 9]
                i = 0
            elif i < 0:
                i += n
            H[code[pc, 2]] = i
            pc += 1
        elif op == LDX or op == STX:
            d, a, b, c, n, fl = (
                code[pc, 2],
                code[pc, 3],
                code[pc, 4],
                code[pc, 5],
                code[pc, 6],
                code[pc, 7],
            )
            at = a + int(H[b]) * code[pc, 8]
            if c >= 0:
                at += int(H[c]) * code[pc, 9]
            if op == LDX:
                for t in range(n):
                    H[d + t] = H[at + t]
            else:
                ma = fl & 3
                for t in range(n):
                    H[at + t] = H[d + _at(ma, t, 0)]
            pc += 1
        elif op == DOT:
            d, a, b, m, k, q = (
                code[pc, 2],
                code[pc, 3],
                code[pc, 4],
                code[pc, 5],
                code[pc, 8],
                code[pc, 9],
            )
            for i in range(m):
                for j in range(q):
                    acc = 0.0
                    for t in range(k):
                        acc += H[a + i * k + t] * H[b + t * q + j]
                    H[d + i * q + j] = acc
            pc += 1
        elif op == RED:
            H[code[pc, 2]] = _reduce(code[pc, 1], H, code[pc, 3], code[pc, 6])
            pc += 1
        elif op == LOG:
            logbuf[int(H[code[pc, 4]])] = int(H[code[pc, 3]])
            pc += 1
        elif op == LOGLEN:
            H[code[pc, 2]] = logbuf.shape[0]
            pc += 1
        else:
            return
