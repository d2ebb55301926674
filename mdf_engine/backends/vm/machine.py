"""Tier 0's Numba machine: one engine-wide ``@njit(cache=True)`` function that runs a program
(the instruction set: :mod:`.ops`).

The machine is compiled once per installation (Numba's cache, like the registry's kernels),
so a model runs without any code of its own being compiled. It is slower than the generated
code (every instruction is a dispatch), which is why only short runs use it (see
:mod:`mdf_engine.backends.vm`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .ops import (
    BIN,
    CHK,
    DOT,
    JMP,
    JZ,
    LDX,
    LOG,
    LOGLEN,
    META_ERR,
    META_STEP,
    RED,
    STX,
    UN,
    WHERE,
)


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


@njit(cache=True, inline="always")
def _fields(code, pc):
    """Row ``pc``'s fields after ``op``: ``sub, d, a, b, c, n, fl, e, f`` (:mod:`.ops`; inlined, so
    each instruction loads only the fields it reads)."""
    r = code[pc]
    return r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9]


@njit(cache=True, error_model="numpy")
def execute(code: np.ndarray, H: np.ndarray, logbuf: np.ndarray, meta: np.ndarray) -> None:
    """Run ``code`` over the heap ``H`` until its HALT (see the module docstring)."""
    pc = 0
    while True:
        op = code[pc, 0]
        s, d, a, b, c, n, fl, e, f = _fields(code, pc)
        if op == BIN:
            ma, mb = fl & 3, (fl >> 2) & 3
            for i in range(n):
                H[d + i] = _binary(s, H[a + _at(ma, i, e)], H[b + _at(mb, i, f)])
            pc += 1
        elif op == UN:
            ma = fl & 3
            for i in range(n):
                H[d + i] = _unary(s, H[a + _at(ma, i, e)])
            pc += 1
        elif op == JZ:
            pc = d if H[a] == 0.0 else pc + 1
        elif op == JMP:
            pc = d
        elif op == WHERE:
            ma, mb, mc = fl & 3, (fl >> 2) & 3, (fl >> 4) & 3
            for i in range(n):
                H[d + i] = (
                    H[a + _at(ma, i, 0)] if H[c + _at(mc, i, 0)] != 0.0 else H[b + _at(mb, i, 0)]
                )
            pc += 1
        elif op == CHK:
            i = int(H[b])
            if i < -n or i >= n:
                err = meta[META_ERR]
                if H[err] == 0.0:
                    H[err] = -3.0
                    H[err + 1] = c
                    H[err + 2] = H[meta[META_STEP]]
                    H[err + 3] = i
                    H[err + 4] = n
                    H[err + 5] = f
                i = 0
            elif i < 0:
                i += n
            H[d] = i
            pc += 1
        elif op == LDX or op == STX:
            at = a + int(H[b]) * e
            if c >= 0:
                at += int(H[c]) * f
            if op == LDX:
                for t in range(n):
                    H[d + t] = H[at + t]
            else:
                ma = fl & 3
                for t in range(n):
                    H[at + t] = H[d + _at(ma, t, 0)]
            pc += 1
        elif op == DOT:  # (c x e) @ (e x f)
            for i in range(c):
                for j in range(f):
                    acc = 0.0
                    for t in range(e):
                        acc += H[a + i * e + t] * H[b + t * f + j]
                    H[d + i * f + j] = acc
            pc += 1
        elif op == RED:
            H[d] = _reduce(s, H, a, n)
            pc += 1
        elif op == LOG:
            logbuf[int(H[b])] = int(H[a])
            pc += 1
        elif op == LOGLEN:
            H[d] = logbuf.shape[0]
            pc += 1
        else:
            return
